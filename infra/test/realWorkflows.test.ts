// The real thing: workflows/ compiled by the compiler, the runtime's handlers bundled by the local
// esbuild, synthesized with cdk-nag and CloudFormation validation as `npx cdk synth` does.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Template } from 'aws-cdk-lib/assertions';
import { compileDocument } from '@stepforge/compiler';
import { buildApp } from '../lib/buildApp.js';
import { handlerEntry } from '../lib/constructs/StepHandlers.js';
import { ALL_HANDLERS } from '@stepforge/contract';
import { isWorkflowFile } from '../lib/workflows/loadWorkflows.js';
import { ROOT } from './synthFixtureStack.js';

const HANDLERS = join(ROOT, 'packages/runtime/src/handlers');
const missing = ALL_HANDLERS.filter((h) => !handlerEntry(HANDLERS, h));
if (missing.length > 0) console.warn(`[infra] real synth skipped: handler entries not written yet: ${missing.join(', ')}`);

describe.skipIf(missing.length > 0)('Function: buildApp (workflows/, real handlers, bundled, validated)', () => {
  let outdir: string;
  let template: Template;
  let assetsDir: string;

  beforeAll(() => {
    delete process.env['CDK_VALIDATION'];
    outdir = mkdtempSync(join(tmpdir(), 'stepforge-synth-'));
    const { app, stack } = buildApp({
      projectRoot: ROOT,
      appProps: { outdir, context: { 'aws:cdk:enable-asset-metadata': true, model: 'bedrock:amazon.nova-micro-v1:0' } },
    });
    // Throws when cdk-nag or CloudFormation validation reports an unacknowledged finding.
    const assembly = app.synth();
    template = Template.fromJSON(assembly.getStackByName(stack.stackName).template);
    assetsDir = assembly.directory;
  }, 400_000);

  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it('deploys every workflow with exactly the compiler output as its definition', () => {
    const files = readdirSync(join(ROOT, 'workflows')).filter(isWorkflowFile);
    expect(files.length).toBeGreaterThanOrEqual(3);
    const machines = Object.values(template.findResources('AWS::StepFunctions::StateMachine'));
    expect(machines).toHaveLength(files.length);
    for (const f of files) {
      const text = readFileSync(join(ROOT, 'workflows', f), 'utf8');
      const plain = compileDocument(text, { file: `workflows/${f}` });
      const sm = machines.find((m) => m.Properties.StateMachineName === plain.name);
      expect(sm, plain.name).toBeDefined();
      const express = sm!.Properties.StateMachineType === 'EXPRESS';
      const compiled = express ? compileDocument(text, { file: `workflows/${f}`, express: true }) : plain;
      expect(JSON.parse(sm!.Properties.DefinitionString as string)).toEqual(compiled.asl);
      const subs = sm!.Properties.DefinitionSubstitutions as Record<string, unknown>;
      const real = Object.keys(subs).filter((k) => subs[k] !== '${' + k + '}');
      expect(real.map((k) => '${' + k + '}').sort()).toEqual([...compiled.manifest.placeholders].sort());
    }
  });

  it('deploys order-triage as Express with its EventBridge trigger', () => {
    const sm = Object.values(template.findResources('AWS::StepFunctions::StateMachine')).find(
      (m) => m.Properties.StateMachineName === 'order-triage',
    );
    expect(sm!.Properties.StateMachineType).toBe('EXPRESS');
    template.hasResourceProperties('AWS::Events::Rule', { EventPattern: { source: ['acme.orders'], 'detail-type': ['OrderPlaced'] } });
  });

  it('bundles each handler, and the writer of workflow records, once with the local esbuild into an ESM asset', () => {
    const fns = Object.values(template.findResources('AWS::Lambda::Function'));
    const lambdas = ALL_HANDLERS.length + 1;
    expect(fns).toHaveLength(lambdas);
    const assets = new Set<string>();
    for (const fn of fns) {
      const asset = fn.Metadata?.['aws:asset:path'] as string;
      expect(asset).toMatch(/^asset\./);
      const code = join(assetsDir, asset, 'index.mjs');
      expect(existsSync(code), code).toBe(true);
      expect(statSync(code).size).toBeGreaterThan(1000);
      expect(fn.Properties.Handler).toBe('index.handler');
      expect(fn.Properties.Runtime).toBe('nodejs22.x');
      // The stack deploys the Secrets Manager backend, so the bundle carries its store and not SSM's.
      const text = readFileSync(code, 'utf8');
      expect(text).toContain('GetSecretValue');
      expect(text).not.toContain('GetParametersByPath');
      assets.add(asset);
    }
    expect(assets.size).toBe(lambdas);
  });
});
