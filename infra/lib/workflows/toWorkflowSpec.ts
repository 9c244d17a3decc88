// A compile result as the stack deploys it. Everything beyond the ASL is read from the manifest the
// compiler wrote, for every format alike: infra never reads a workflow's source.
import { findPlaceholders, type ManifestTrigger } from '@stepforge/contract';
import type { CompiledDocument } from './compilerBinding.js';
import type { TriggerSpec, WorkflowSpec } from './WorkflowSpec.js';

/** What the stack deploys of a compile result: its ASL, and the facts its manifest carries. */
export function toWorkflowSpec(
  compiled: CompiledDocument,
  file: string,
  code?: Pick<WorkflowSpec, 'codeModule' | 'childWorkflows'>,
): WorkflowSpec {
  const m = compiled.manifest;
  const express = m.type === 'EXPRESS';
  return {
    name: compiled.name,
    displayName: compiled.displayName ?? compiled.name,
    ...(compiled.ir?.nameLocation !== undefined ? { nameLocation: compiled.ir.nameLocation } : {}),
    file,
    format: m.format,
    asl: compiled.asl,
    manifest: m,
    express,
    // Asked for, and refused by the compiler's rule (which `compile --express` applies too): the
    // same document deploys as Standard, and the app reports why.
    ...(m.express.requested && !express && m.express.blocker !== undefined ? { expressFallbackReason: m.express.blocker } : {}),
    triggers: m.triggers.map(triggerSpec),
    secretsByHandler: m.secretsByHandler,
    placeholders: findPlaceholders(compiled.asl),
    mcpServers: m.mcpServers,
    ...code,
  };
}

/** A manifest trigger as the stack deploys it: the account's default bus, named or not, is no bus name. */
function triggerSpec(t: ManifestTrigger): TriggerSpec {
  return {
    name: t.name,
    eventPattern: t.eventPattern,
    eventBus: t.eventBus === 'default' ? undefined : t.eventBus,
    ...(t.description !== undefined ? { description: t.description } : {}),
  };
}
