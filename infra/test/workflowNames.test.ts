// The CDK app names what it deploys after each workflow's name, derived from the document's display
// name: workflows/ as the repository has it, plus documents whose display names are free text,
// compiled by the real compiler and synthesized (bundling skipped; realWorkflows.test.ts bundles).
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { compileDocument, workflowSlug } from '@stepforge/compiler';
import { buildApp } from '../lib/buildApp.js';
import { isWorkflowFile, loadWorkflows } from '../lib/workflows/loadWorkflows.js';
import type { StepforgeStack } from '../lib/StepforgeStack.js';
import { ROOT } from './synthFixtureStack.js';

/** A DSL document named `name` (one agent step). */
const dsl = (name: string) =>
  [
    'document:',
    '  dsl: "1.0.0"',
    `  name: ${name}`,
    '  version: "0.1.0"',
    'agents:',
    '  Triage_Agent: {}',
    'steps:',
    '  greet:',
    '    call: agent',
    '    agent: Triage_Agent',
    '    input_template: "User said: ${ input.message }"',
    '',
  ].join('\n');

/** The extra documents, by file: display names with spaces, punctuation and accents. */
const EXTRA: Record<string, [display: string, slug: string]> = {
  'triage-eu.yaml': ['Triage — EU', 'Triage-EU'],
  'document-analysis.yaml': ['Document analysis', 'Document-analysis'],
  'resume.yaml': ['Résumé screening (v2)', 'Resume-screening-v2'],
};

function synth(workflowsDir: string): { stack: StepforgeStack; template: Template } {
  const { stack } = buildApp({
    projectRoot: ROOT,
    workflowsDir,
    handlersDir: join(ROOT, 'infra/test/fixtures/handlers'),
    appProps: { context: { 'aws:cdk:bundling-stacks': [] } },
  });
  return { stack, template: Template.fromStack(stack) };
}

describe('Function: buildApp (workflow names derived from display names)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-infra-names-'));
  const repoFiles = readdirSync(join(ROOT, 'workflows')).filter(isWorkflowFile).sort();
  let first: { stack: StepforgeStack; template: Template };
  let second: { stack: StepforgeStack; template: Template };

  beforeAll(() => {
    // Built-in CloudFormation validation runs in realWorkflows.test.ts; here it only costs time.
    process.env['CDK_VALIDATION'] = 'false';
    for (const f of readdirSync(join(ROOT, 'workflows'))) copyFileSync(join(ROOT, 'workflows', f), join(dir, f));
    for (const [file, [display]] of Object.entries(EXTRA)) writeFileSync(join(dir, file), dsl(JSON.stringify(display)));
    first = synth(dir);
    second = synth(dir);
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("names each state machine by the workflow name, and its definition's Comment by the display name", () => {
    const machines = Object.values(first.template.findResources('AWS::StepFunctions::StateMachine'));
    expect(machines).toHaveLength(repoFiles.length + Object.keys(EXTRA).length);
    const expected = [
      ...repoFiles.map((f) => {
        const c = compileDocument(readFileSync(join(ROOT, 'workflows', f), 'utf8'), { file: `workflows/${f}` });
        return [c.name, c.displayName] as const;
      }),
      ...Object.values(EXTRA).map(([display, slug]) => [slug, display] as const),
    ];
    for (const [name, display] of expected) {
      expect(workflowSlug(display)).toBe(name);
      const sm = machines.find((m) => m.Properties.StateMachineName === name);
      expect(sm, name).toBeDefined();
      const definition = JSON.parse(sm!.Properties.DefinitionString as string) as { Comment: string };
      expect(definition.Comment.startsWith(`${display} — compiled by Stepforge from `), definition.Comment).toBe(true);
    }
    expect(machines.map((m) => m.Properties.StateMachineName).sort()).toEqual(expected.map(([n]) => n).sort());
  });

  it('derives construct ids, log groups and alarms from the workflow name, the same on every synth', () => {
    for (const [display, slug] of Object.values(EXTRA)) {
      const machine = first.stack.machines.get(slug)!;
      expect(machine.node.id).toBe(`Workflow-${slug}`);
      const logicalId = Stack.of(machine).getLogicalId(machine.stateMachine.node.defaultChild as never);
      expect(logicalId).toMatch(new RegExp(`^Workflow${slug.replace(/[^A-Za-z0-9]/g, '')}StateMachine[0-9A-F]{8}$`));
      const again = second.stack.machines.get(slug)!;
      expect(Stack.of(again).getLogicalId(again.stateMachine.node.defaultChild as never)).toBe(logicalId);
      first.template.hasResourceProperties('AWS::Logs::LogGroup', { LogGroupName: `/aws/vendedlogs/states/stepforge-${slug}` });
      first.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        AlarmDescription: `Stepforge workflow '${display}' (${slug}): an execution failed, timed out or was aborted`,
      });
    }
    // The whole template is the same on every synth: nothing in it depends on when or how often it is built.
    expect(second.template.toJSON()).toEqual(first.template.toJSON());
  });
});

describe('Function: loadWorkflows (two workflows, one workflow name)', () => {
  it('refuses the second document whose display name gives a workflow name another has, at its name, naming both', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-infra-dup-'));
    try {
      writeFileSync(join(dir, 'a.yaml'), dsl('"Triage — EU"'));
      writeFileSync(join(dir, 'b.yaml'), dsl('Triage EU'));
      const err = (() => {
        try {
          loadWorkflows(dir, { rootDir: dir });
          return undefined;
        } catch (e) {
          return e as { name: string; code: string; message: string; location: unknown; hint: string };
        }
      })();
      expect(err).toMatchObject({
        name: 'StepforgeError',
        code: 'duplicate_workflow',
        message:
          "b.yaml names its workflow 'Triage EU' (workflow name 'Triage-EU'), which gives the same workflow name as 'Triage — EU' (workflow name 'Triage-EU') of a.yaml: state machine names must be unique in a project",
        location: { file: 'b.yaml', line: 3, column: 9 },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
