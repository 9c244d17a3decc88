// Contenox task chains in workflows/ deploy like the other documents: a .json (or YAML) chain is
// compiled by the compiler alone, its macros filled from the synth's environment, and becomes a
// state machine of the stack; policy.json beside them stays the approval policy.
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { isStepforgeError } from '@stepforge/compiler';
import { buildApp } from '../lib/buildApp.js';
import { isWorkflowFile, loadWorkflows } from '../lib/workflows/loadWorkflows.js';
import { ROOT } from './synthFixtureStack.js';

const TRIAGE_YAML = `id: triage
tasks:
  - id: classify
    handler: route
    execute_config: { model: "{{var:triage_model|anthropic.claude-3-5-haiku-20241022-v1:0}}", provider: bedrock }
    transition:
      branches:
        - { operator: equals, when: bug, goto: end }
        - { operator: default, goto: note }
  - id: note
    handler: noop
`;

describe('Contenox chains in workflows/', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-cxinfra-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  copyFileSync(join(ROOT, 'test/e2e/fixtures/contenox/review.json'), join(dir, 'review.json'));
  writeFileSync(join(dir, 'triage.yaml'), TRIAGE_YAML);
  writeFileSync(join(dir, 'policy.json'), '[{"tool":"shell","action":"approve"}]');
  const vars = { model: 'anthropic.claude-3-5-haiku-20241022-v1:0', provider: 'bedrock' };

  it('takes .json files as workflows, but not the approval policy', () => {
    expect(['review.json', 'triage.yaml', 'a.yml', 'policy.json', '.hidden.json'].map(isWorkflowFile)).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
  });

  it('compiles a JSON and a YAML chain with the compiler, macros from the environment', () => {
    const specs = loadWorkflows(dir, { rootDir: dir, vars });
    expect(specs.map((s) => [s.name, s.file, s.format, s.express, s.triggers])).toEqual([
      ['review', 'review.json', 'contenox', false, []],
      ['triage', 'triage.yaml', 'contenox', false, []],
    ]);
    expect(specs[0]!.manifest.bedrockModels).toEqual(['anthropic.claude-3-5-haiku-20241022-v1:0']);
    expect(specs[0]!.placeholders).toEqual(['ModelStepFunctionArn', 'ToolStepFunctionArn']);
    expect(specs[1]!.manifest.bedrockModels).toEqual(['anthropic.claude-3-5-haiku-20241022-v1:0']);
  });

  it('refuses a chain with a macro the synth environment does not fill, at the macro', () => {
    let error: unknown;
    try {
      loadWorkflows(dir, { rootDir: dir, vars: {} });
    } catch (e) {
      error = e;
    }
    expect(isStepforgeError(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'unfilled_macro',
      message: 'macro {{var:model}} has no value',
      location: { file: 'review.json', line: 10, column: 19 },
    });
  });

  it('synthesises a state machine per chain', () => {
    writeFileSync(
      join(dir, 'review.json'),
      JSON.stringify({
        id: 'review',
        tasks: [
          {
            id: 'review',
            handler: 'chat_completion',
            execute_config: { model: '{{var:model|anthropic.claude-3-5-haiku-20241022-v1:0}}', provider: 'bedrock' },
          },
        ],
      }),
    );
    const { stack } = buildApp({
      projectRoot: ROOT,
      workflowsDir: dir,
      handlersDir: join(ROOT, 'infra/test/fixtures/handlers'),
      appProps: { context: { 'aws:cdk:bundling-stacks': [] } },
    });
    const machines = Template.fromStack(stack).findResources('AWS::StepFunctions::StateMachine');
    const names = Object.values(machines).map((m) => (m as { Properties: { StateMachineName?: unknown } }).Properties.StateMachineName);
    expect(JSON.stringify(names)).toContain('review');
    expect(JSON.stringify(names)).toContain('triage');
  });
});
