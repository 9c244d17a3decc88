import type { ManifestTrigger, SourceLocation } from '@stepforge/contract';
import type { InputSchema } from '../input/InputSchema.js';
import type { ChainTask } from './ChainTask.js';

/** One step of a loaded chain: a node of the graph, numbered in first-appearance order. */
export interface ChainStep {
  /** Position in `ChainDocument.steps` (= the node index used by edges). */
  readonly index: number;
  readonly handle: string;
  /** The task's kind (`model`, `tool`, `connector`, `pure`; `unknown` when topology-only loading found none). */
  readonly kind: string;
  /** Tool grants from every `@tag` on every use of the handle, first appearance first, de-duplicated. */
  readonly tools: readonly string[];
  /** The task definition from `tasks:` (validated when loaded at level `full`). */
  readonly task: ChainTask;
  /** sha256 (hex) of the canonical JSON of {kind, config, tools}: stable across formatting and key order. */
  readonly identity: string;
  /** Where the handle first appears (inside the `chain:` scalar). */
  readonly location?: SourceLocation;
  /** Where the task is defined (its key under `tasks:`). */
  readonly taskLocation?: SourceLocation;
  /** Turn/tool-call budget of an agentic model step (tier budget narrowed by `max_turns`/`max_tool_calls`). */
  readonly budget?: { readonly maxTurns: number; readonly maxToolCalls: number };
}

/** A loaded, checked chain document: plain readonly data the lowering consumes. */
export interface ChainDocument {
  readonly format: 'chain';
  /** `name:` when given, else undefined (callers derive one from the file name). */
  readonly name?: string;
  readonly description?: string;
  /** The chain expression as written. */
  readonly chain: string;
  readonly tier: string;
  /** The `input:` schema, normalised (no fields when the document declares none). */
  readonly input: InputSchema;
  readonly seed?: number;
  /** Steps (graph nodes) in first-appearance order. */
  readonly steps: readonly ChainStep[];
  /** `[parent, child]` step indices, de-duplicated, sorted by (parent, child). */
  readonly edges: readonly (readonly [number, number])[];
  /** Every task under `tasks:`, including unused ones (which are not validated). */
  readonly tasks: Readonly<Record<string, unknown>>;
  /** Kortecx's `context_bundles` as written (no effect here; kept for the Kortecx lowering). */
  readonly contextBundles?: readonly string[];
  /** `express:` as written (a deployment setting the CDK app reads from the manifest). */
  readonly express?: boolean;
  /** `triggers:`, checked, with names defaulted. */
  readonly triggers?: readonly ManifestTrigger[];
}
