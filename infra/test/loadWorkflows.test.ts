import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileDocument, isStepforgeError, loadDocument } from '@stepforge/compiler';
import { expressBlocker, loadWorkflow, loadWorkflows } from '../lib/workflows/loadWorkflows.js';
import { findPlaceholders, substitutePlaceholders } from '@stepforge/contract';
import { fixtureCompile } from './fixtures/fixtureCompile.js';
import { FIXTURE_WORKFLOWS, ROOT } from './synthFixtureStack.js';

function caught(fn: () => unknown): { code: string; message: string; location?: { line: number; column: number; file?: string } } {
  try {
    fn();
  } catch (e) {
    if (!isStepforgeError(e)) throw e;
    return e as never;
  }
  throw new Error('expected a StepforgeError');
}

describe('Function: loadWorkflows', () => {
  it('compiles every workflow file in the directory, sorted, with paths relative to the root', () => {
    const specs = loadWorkflows(FIXTURE_WORKFLOWS, { rootDir: ROOT, compile: fixtureCompile });
    expect(specs.map((s) => [s.name, s.file, s.format])).toEqual([
      ['brief', 'infra/test/fixtures/workflows/brief.chain.yaml', 'chain'],
      ['orders', 'infra/test/fixtures/workflows/orders.yaml', 'dsl'],
      ['refund', 'infra/test/fixtures/workflows/refund.yaml', 'dsl'],
    ]);
  });

  it('reads a Kortyx workflow file by name as the module made of it, not as another format; one that does not parse is invalid_yaml at its line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-kortyx-cdk-'));
    try {
      // Outside the workflows folder, where it would be deployed as a module of its own.
      mkdirSync(join(dir, 'nodes'));
      writeFileSync(join(dir, 'nodes', 'hello.mjs'), 'export function hello() { return { data: { hi: true } }; }\n');
      mkdirSync(join(dir, 'workflows'));
      writeFileSync(
        join(dir, 'workflows', 'support.workflow.yaml'),
        'id: support\nversion: "1"\nnodes:\n  greet: { run: ../nodes/hello.mjs#hello }\nedges: [["__start__", "greet"], ["greet", "__end__"]]\n',
      );
      const [spec] = loadWorkflows(join(dir, 'workflows'), { rootDir: dir, compile: fixtureCompile });
      expect([spec!.name, spec!.format, spec!.file, spec!.codeModule!.bundle]).toEqual([
        'support',
        'code',
        'workflows/support.workflow.yaml',
        'workflows__support.workflow.yaml.mjs',
      ]);
      // Its imports are absolute: the function Lambda's bundling bundles it from a folder of its own.
      expect(spec!.codeModule!.generated).toContain(`import * as m0 from ${JSON.stringify(join(dir, 'nodes', 'hello.mjs'))};`);
      writeFileSync(join(dir, 'workflows', 'support.workflow.yaml'), 'id: support\nnodes: [\n');
      const e = caught(() => loadWorkflows(join(dir, 'workflows'), { rootDir: dir, compile: fixtureCompile }));
      expect([e.code, e.location]).toEqual(['invalid_yaml', { file: 'workflows/support.workflow.yaml', line: 3, column: 1 }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads triggers, honours express when possible and records why it fell back otherwise', () => {
    const [brief, orders, refund] = loadWorkflows(FIXTURE_WORKFLOWS, { rootDir: ROOT, compile: fixtureCompile });
    expect(brief!.express).toBe(false);
    expect(brief!.expressFallbackReason).toBeUndefined();
    expect(orders!.express).toBe(true);
    expect(orders!.triggers).toEqual([
      {
        name: 'placed',
        eventPattern: { source: ['acme.orders'], 'detail-type': ['OrderPlaced'] },
        eventBus: undefined,
        description: 'New orders start the orders workflow',
      },
    ]);
    expect(refund!.express).toBe(false);
    expect(refund!.expressFallbackReason).toBe('step pay waits for approval');
  });

  it('collects placeholders, secrets per handler and Bedrock models', () => {
    const [brief, orders, refund] = loadWorkflows(FIXTURE_WORKFLOWS, { rootDir: ROOT, compile: fixtureCompile });
    expect(brief!.placeholders).toEqual(['ModelStepFunctionArn']);
    expect(orders!.placeholders).toEqual(['ConnectorStepFunctionArn', 'FunctionStepFunctionArn']);
    expect(orders!.secretsByHandler).toEqual({ function: ['crm/api-key'] });
    expect(orders!.mcpServers).toEqual({ catalog: { url: 'https://mcp.example.com/mcp' } });
    expect(brief!.mcpServers).toEqual({});
    expect(refund!.placeholders).toEqual(['ApprovalQueueUrl', 'ModelStepFunctionArn', 'ToolStepFunctionArn']);
  });
});

describe('Function: loadWorkflow', () => {
  // The compiler reads the document and checks its deployment settings by the rules `validate`
  // applies: the errors here are its own, located in the document.
  const dsl = 'document: { dsl: "1.0", name: w, version: "1" }\nfunctions: { f: {} }\nsteps:\n  a: { call: function, function: f }\n';
  const at = (text: string, file = 'w.yaml') => {
    const e = caught(() => loadWorkflow(text, file, compileDocument));
    return { code: e.code, message: e.message, location: e.location };
  };

  it('rejects a trigger without an event pattern, a non-list triggers value and an unknown trigger field, at their place', () => {
    expect(at(`${dsl}triggers:\n  - name: t\n`)).toEqual({
      code: 'schema',
      message: "missing required field 'event_pattern' in triggers[0]",
      location: { file: 'w.yaml', line: 6, column: 5, length: 7 },
    });
    expect(at(`${dsl}triggers: { source: x }\n`)).toEqual({
      code: 'schema',
      message: 'triggers: expected a list, got a mapping',
      location: { file: 'w.yaml', line: 5, column: 11, length: 13 },
    });
    // A misspelt field would deploy another rule than the one meant: refused without strict too, in both formats.
    expect(at(`${dsl}triggers:\n  - event_pattern: { source: [x] }\n    schedule: daily\n`)).toEqual({
      code: 'unknown_field',
      message: "unknown field 'schedule' in triggers[0]",
      location: { file: 'w.yaml', line: 7, column: 5, length: 8 },
    });
    expect(
      at(
        'chain: a@x\ntasks:\n  a: { kind: model, prompt: p }\ntriggers:\n  - event_pattern: { source: [x] }\n    schedule: daily\n',
        'w.chain.yaml',
      ),
    ).toEqual({
      code: 'invalid_document',
      message: 'triggers[0].schedule: unknown field (a trigger has name, description, event_pattern, event_bus)',
      location: { file: 'w.chain.yaml', line: 6, column: 5, length: 8 },
    });
  });

  it('checks a trigger by the rules validate --strict applies: a description passes both, an empty pattern or a long description fails both', () => {
    const strictErrors = (text: string) => loadDocument(text, { file: 'w.yaml', strict: true }).errors.map((e) => e.message);
    const described = `${dsl}triggers:\n  - name: t\n    description: Starts w on new orders\n    event_pattern: { source: [x] }\n`;
    expect(strictErrors(described)).toEqual([]);
    expect(loadWorkflow(described, 'w.yaml', compileDocument).triggers).toEqual([
      { name: 't', eventPattern: { source: ['x'] }, eventBus: undefined, description: 'Starts w on new orders' },
    ]);
    const chain = `${described.slice(dsl.length)}chain: a@x\ntasks:\n  a: { kind: model, prompt: p }\n`;
    expect(strictErrors(chain)).toEqual([]);
    expect(loadWorkflow(chain, 'w.chain.yaml', compileDocument).triggers[0]!.description).toBe('Starts w on new orders');

    const long = `${dsl}triggers:\n  - description: ${'x'.repeat(513)}\n    event_pattern: { source: [x] }\n`;
    const longMessage = "triggers[0].description: at most 512 characters (EventBridge's limit on a rule's description)";
    expect(strictErrors(long)).toEqual([longMessage]);
    expect(at(long)).toEqual({ code: 'schema', message: longMessage, location: { file: 'w.yaml', line: 6, column: 18, length: 513 } });
    const empty = `${dsl}triggers:\n  - event_pattern: {}\n`;
    const emptyMessage = 'triggers[0].event_pattern: expected a non-empty mapping (an EventBridge event pattern), got a mapping';
    expect(strictErrors(empty)).toEqual([emptyMessage]);
    expect(at(empty)).toEqual({ code: 'schema', message: emptyMessage, location: { file: 'w.yaml', line: 6, column: 20, length: 2 } });
  });

  it('rejects a non-boolean express flag at its value', () => {
    expect(at(`${dsl}express: yes please\n`)).toEqual({
      code: 'schema',
      message: 'express: expected true or false, got "yes please"',
      location: { file: 'w.yaml', line: 5, column: 10, length: 10 },
    });
  });

  it('keeps a named custom event bus and drops "default"', () => {
    const spec = loadWorkflow(
      `${dsl}triggers:\n  - event_pattern: { source: [a] }\n    event_bus: orders-bus\n  - event_pattern: { source: [b] }\n    event_bus: default\n`,
      'w.yaml',
      compileDocument,
    );
    expect(spec.triggers.map((t) => [t.name, t.eventBus])).toEqual([
      ['trigger1', 'orders-bus'],
      ['trigger2', undefined],
    ]);
  });

  it('names an alias without its anchor, an alias inside its own value, a tag and runaway aliases at their place', () => {
    expect(at(`${dsl}triggers: *t\n`)).toEqual({
      code: 'yaml',
      message:
        "alias '*t' has no anchor: no value before it is marked '&t'; mark the value to repeat with &t earlier in the file, or write the value out here",
      location: { file: 'w.yaml', line: 5, column: 11, length: 2 },
    });
    expect(at(`${dsl}mcp_servers: &m\n  catalog: *m\n`)).toMatchObject({
      code: 'yaml',
      message: expect.stringMatching(/^alias '\*m' is inside the value its anchor '&m' marks/),
      location: { line: 6, column: 12 },
    });
    expect(at(`${dsl}express: !flag true\n`)).toMatchObject({
      code: 'yaml',
      message: expect.stringMatching(/^YAML tag '!flag' is not supported/),
      location: { line: 5, column: 10 },
    });
    const laughs = [
      'x: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]',
      ...['b', 'c', 'd'].map((n, i) => `${n}: &${n} [${Array(10).fill(`*${'abc'[i]}`).join(', ')}]`),
    ].join('\n');
    expect(at(`${laughs}\n${dsl}`)).toMatchObject({
      code: 'yaml',
      message: expect.stringMatching(/^the aliases in this document expand to too many values/),
      location: { line: 2 },
    });
    expect(at(`${dsl}triggers: [\n`)).toMatchObject({ code: 'yaml', location: { line: 6, column: 1 } });
  });

  it('reads triggers and MCP servers given through aliases', () => {
    const spec = loadWorkflow(
      `${dsl}x-shared: &p { source: [a] }\nx-servers: &s { catalog: { url: "https://mcp.example.com/mcp" } }\ntriggers:\n  - event_pattern: *p\n  - &second { event_pattern: { source: [b] } }\nmcp_servers: *s\n`,
      'w.yaml',
      compileDocument,
    );
    expect(spec.triggers.map((t) => [t.name, t.eventPattern])).toEqual([
      ['trigger1', { source: ['a'] }],
      ['trigger2', { source: ['b'] }],
    ]);
    expect(spec.mcpServers).toEqual({ catalog: { url: 'https://mcp.example.com/mcp' } });
  });

  it("gives secrets the document binds for no step to every step handler the workflow uses, and a step's own to its handler", () => {
    const spec = loadWorkflow(
      'document: { dsl: "1.0", name: w, version: "1" }\nagents: { helper: {} }\nfunctions: { f: {} }\nsecrets: { token: "$secret:slack/token", crm: "$secret:crm/key" }\n' +
        'steps:\n  a: { call: function, function: f, secrets: { key: crm } }\n  b: { call: agent, agent: helper }\n',
      'w.yaml',
      compileDocument,
    );
    expect(spec.secretsByHandler).toEqual({ model: ['slack/token'], function: ['crm/key', 'slack/token'] });
  });
});

describe('Function: expressBlocker', () => {
  it('names the callback and .sync patterns and accepts plain Lambda tasks', () => {
    expect(expressBlocker({ States: { a: { Resource: 'arn:aws:states:::sqs:sendMessage.waitForTaskToken' } } })).toMatch(/task token/);
    expect(expressBlocker({ States: { a: { Resource: 'arn:aws:states:::states:startExecution.sync:2' } } })).toMatch(/\.sync/);
    expect(expressBlocker({ States: { a: { Resource: 'arn:aws:states:::lambda:invoke' } } })).toBeUndefined();
  });
});

describe('Function: findPlaceholders', () => {
  it('finds only the known placeholders, ignoring template text', () => {
    expect(findPlaceholders({ a: '${ToolStepFunctionArn}', b: 'Plan ${input.topic}', c: '${RunsTableName}', d: '${Unknown}' })).toEqual([
      'RunsTableName',
      'ToolStepFunctionArn',
    ]);
  });
});

describe('Function: substitutePlaceholders', () => {
  it('replaces mapped keys and leaves everything else verbatim', () => {
    expect(substitutePlaceholders('${A} ${input.x} ${B}', { A: 'arn:1' })).toBe('arn:1 ${input.x} ${B}');
  });
});
