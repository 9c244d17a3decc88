// Every YAML example of docs/dsl.md and the README's workflow DSL section, as printed: a whole
// document validates, compiles to ASL that asl-validator accepts, and runs on the embedded stack
// with the offline provider (its functions from fixtures/docs-functions/, its Slack connector
// posting to a webhook on loopback). A block that is part of a document is marked in the docs
// with `<!-- example: fragment -->` on the line before it and is checked placed in a document (with
// the agents and functions it names declared); one that shows a mistake is marked
// `<!-- example: error <class> -->` and must fail validation with that class. An unmarked block that
// is not a whole document fails the test, so a new example cannot be left unchecked.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { compileDocument, loadDocument } from '@stepforge/compiler';
import { openStack, type EmbeddedStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { EmbeddedRunService } from '../../packages/embedded/src/RunService.js';
import { REPO, tempProject } from './support/testIo.js';

const require = createRequire(import.meta.url);
const aslValidator = require('asl-validator') as (d: unknown) => { isValid: boolean; errorsText(sep?: string): string };
const FUNCTIONS_DIR = fileURLToPath(new URL('./fixtures/docs-functions/', import.meta.url));

interface Example {
  readonly file: string;
  readonly line: number;
  readonly text: string;
  /** From the marker on the line before the block: `fragment`, `error <class>`, or none (a whole document). */
  readonly mark?: { kind: 'fragment' } | { kind: 'error'; code: string };
}

/** The ```yaml blocks of a Markdown file, with their line and marker. */
function yamlExamples(file: string, section?: { from: RegExp; to: RegExp }): Example[] {
  const lines = readFileSync(join(REPO, file), 'utf8').split('\n');
  let [start, end] = [0, lines.length];
  if (section) {
    start = lines.findIndex((l) => section.from.test(l));
    end = lines.findIndex((l, i) => i > start && section.to.test(l));
    if (end < 0) end = lines.length;
  }
  const out: Example[] = [];
  for (let i = start; i < end; i++) {
    if (lines[i]!.trim() !== '```yaml') continue;
    const close = lines.findIndex((l, j) => j > i && l.trim() === '```');
    const marker = /^<!-- example: (fragment|error ([a-z_]+)) -->$/.exec(lines[i - 1]?.trim() ?? '');
    const mark = marker ? (marker[2] ? { kind: 'error' as const, code: marker[2] } : { kind: 'fragment' as const }) : undefined;
    out.push({ file, line: i + 2, text: lines.slice(i + 1, close).join('\n') + '\n', ...(mark ? { mark } : {}) });
    i = close;
  }
  return out;
}

/** A fragment placed in a document: its sections, the agents and functions its steps name declared, a step if it has none. */
function placed(ex: Example): string {
  const data = (parse(ex.text) ?? {}) as Record<string, unknown>;
  const agents: Record<string, unknown> = {};
  const functions: Record<string, unknown> = {};
  const visit = (steps: unknown): void => {
    for (const def of Object.values((steps ?? {}) as Record<string, Record<string, unknown>>)) {
      if (typeof def.agent === 'string') agents[def.agent] = {};
      if (typeof def.function === 'string') functions[def.function] = {};
      visit(def.do);
    }
  };
  visit(data.steps);
  const doc: Record<string, unknown> = {
    document: { dsl: '1.0.0', name: `Docs example at line ${ex.line}`, version: '0.1.0' },
    ...(Object.keys(agents).length ? { agents } : {}),
    ...(Object.keys(functions).length ? { functions } : {}),
    ...data,
  };
  if (!doc.steps) doc.steps = { done: { call: 'conditional', condition: '${ true }' } };
  return stringify(doc);
}

const EXAMPLES = [...yamlExamples('docs/dsl.md'), ...yamlExamples('README.md', { from: /^## The workflow DSL/, to: /^## / })];

describe("The YAML examples of docs/dsl.md and the README's workflow DSL section", () => {
  const project = tempProject('sf-docs-examples-');
  const posted: unknown[] = [];
  let slack: Server;
  let stack: EmbeddedStack;
  let service: EmbeddedRunService;

  beforeAll(async () => {
    slack = createServer((req, res) => {
      let body = '';
      req
        .setEncoding('utf8')
        .on('data', (c: string) => (body += c))
        .on('end', () => {
          posted.push(JSON.parse(body));
          res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        });
    });
    await new Promise<void>((r) => slack.listen(0, '127.0.0.1', () => r()));
    stack = await openStack({
      projectDir: project.dir,
      inMemory: true,
      provider: 'local',
      env: {
        STEPFORGE_LOG_LEVEL: 'SILENT',
        STEPFORGE_FUNCTIONS_DIR: FUNCTIONS_DIR,
        STEPFORGE_SLACK_WEBHOOK_URL: `http://127.0.0.1:${(slack.address() as AddressInfo).port}/hook`,
        STEPFORGE_SECRET_PROD_SLACK_TOKEN: 'docs-example-token',
      },
    });
    service = new EmbeddedRunService(stack, project.dir);
  });
  afterAll(async () => {
    await stack?.close();
    await new Promise((r) => slack?.close(r));
    project.remove();
  });

  it("finds the examples (the main one of docs/dsl.md, its fragments, and the README's)", () => {
    expect(EXAMPLES.filter((e) => e.file === 'docs/dsl.md').length).toBeGreaterThanOrEqual(4);
    expect(EXAMPLES.filter((e) => e.file === 'README.md').length).toBeGreaterThanOrEqual(1);
  });

  for (const ex of EXAMPLES) {
    const title = `${ex.file}:${ex.line}${ex.mark ? ` (${ex.mark.kind === 'error' ? `error ${ex.mark.code}` : 'fragment'})` : ''}`;
    if (ex.mark?.kind === 'error') {
      const code = ex.mark.code;
      it(`${title} fails validation with error[${code}]`, () => {
        const r = loadDocument(ex.text, { file: 'example.yaml' });
        expect(r.errors.map((e) => e.code)).toContain(code);
      });
      continue;
    }
    it(`${title} validates, compiles to ASL asl-validator accepts, and runs offline to SUCCEEDED`, async () => {
      const data = parse(ex.text) as Record<string, unknown> | null;
      const whole = data !== null && typeof data === 'object' && 'document' in data && 'steps' in data;
      // An unmarked block must be a whole document; a fragment must be marked as one.
      expect(
        whole,
        `${title}: ${whole ? 'a whole document marked as a fragment' : 'not a whole document: mark it <!-- example: fragment --> or make it one'}`,
      ).toBe(ex.mark === undefined);
      const text = whole ? ex.text : placed(ex);
      const loaded = loadDocument(text, { file: 'example.yaml' });
      expect(loaded.errors.map((e) => `${e.code} ${e.location?.line}:${e.location?.column} ${e.message}`)).toEqual([]);
      expect(loaded.warnings.map((w) => `${w.code} ${w.message}`)).toEqual([]);
      const compiled = compileDocument(text, { file: 'example.yaml' });
      const v = aslValidator(compiled.asl);
      expect(v.isValid, v.errorsText('\n')).toBe(true);
      const { entry } = await service.catalog.registerText(text, `docs-examples/line-${ex.line}.yaml`);
      const started = await service.start(entry, { topic: 'otters' });
      const run = await service.wait(started.run.runId);
      expect({ status: run.status, error: run.error }).toEqual({ status: 'SUCCEEDED', error: undefined });
    });
  }

  it("ran the main example's notify step, which posted the draft to Slack (its when holds at the default depth)", () => {
    expect(posted).toContainEqual(
      expect.objectContaining({ text: expect.stringContaining('[offline:echo] Write about otters.\nSources: []') }),
    );
  });
});
