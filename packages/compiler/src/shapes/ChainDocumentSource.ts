import { stringify } from 'yaml';
import type { ChainTask } from '../chain/ChainTask.js';

/** A chain document as plain data, before loading: what the shape helpers return and `stepforge new` writes. */
export interface ChainDocumentSource {
  readonly name?: string;
  readonly description?: string;
  readonly tier?: string;
  readonly input?: Readonly<Record<string, unknown>>;
  readonly chain: string;
  readonly tasks: Readonly<Record<string, ChainTask>>;
}

/** Renders a chain document source as YAML (long lines kept whole so prompts stay readable). */
export function chainDocumentToYaml(doc: ChainDocumentSource, comment?: string): string {
  const ordered = {
    ...(doc.name !== undefined ? { name: doc.name } : {}),
    ...(doc.description !== undefined ? { description: doc.description } : {}),
    ...(doc.tier !== undefined ? { tier: doc.tier } : {}),
    ...(doc.input !== undefined ? { input: doc.input } : {}),
    chain: doc.chain,
    tasks: doc.tasks,
  };
  const body = stringify(ordered, { lineWidth: 0, defaultStringType: 'PLAIN', defaultKeyType: 'PLAIN' });
  const header =
    comment === undefined
      ? ''
      : comment
          .split('\n')
          .map((l) => `# ${l}`.trimEnd())
          .join('\n') + '\n';
  return header + body;
}
