// Workflows written in code in the CDK app: loaded and compiled at synth time with their nodes
// naming the module's bundle in the function Lambda, which the Lambda's bundling writes whole.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../lib/buildApp.js';
import { codeModuleBundleArgs } from '../lib/constructs/StepHandlers.js';
import { loadWorkflows } from '../lib/workflows/loadWorkflows.js';
import { codeFunction } from '../../packages/runtime/src/steps/codeNodeStep.js';
import { ROOT } from './synthFixtureStack.js';

const EXAMPLES = join(ROOT, 'examples', 'code');

describe('Function: loadWorkflows (modules)', () => {
  it('compiles every exported workflow with its nodes naming the bundle under /var/task/code', () => {
    const specs = loadWorkflows(EXAMPLES, { rootDir: ROOT });
    expect(specs.map((s) => [s.name, s.format, s.file, s.codeModule?.bundle])).toEqual([
      ['clinicalPipeline', 'code', 'examples/code/clinical.ts', 'examples__code__clinical.mjs'],
      ['refund', 'code', 'examples/code/refund.ts', 'examples__code__refund.mjs'],
      ['refund-quote', 'code', 'examples/code/refund.ts', 'examples__code__refund.mjs'],
      ['support', 'code', 'examples/code/support.ts', 'examples__code__support.mjs'],
      ['triageGraph', 'code', 'examples/code/triage.ts', 'examples__code__triage.mjs'],
    ]);
    // The useWorkflow child is deployed as its own state machine, which the parent's nested execution starts.
    expect(specs.find((s) => s.name === 'refund')!.childWorkflows).toEqual(['refund-quote']);
    // Each Kortyx workflow of a module may hand the run over to the others (transitionTo): a nested execution too.
    expect(specs.find((s) => s.name === 'refund-quote')!.childWorkflows).toEqual(['refund']);
    expect(Object.keys(specs.find((s) => s.name === 'refund-quote')!.asl.States as object)).toEqual(
      expect.arrayContaining(['refund-quote: hand off?', 'refund-quote: hand off to refund']),
    );
    const triage = JSON.stringify(specs[4]!.asl);
    expect(triage).toContain('"codeModule":"/var/task/code/examples__code__triage.mjs"');
    expect(specs[4]!.placeholders).toEqual(expect.arrayContaining(['FunctionStepFunctionArn', 'ModelStepFunctionArn']));
  });
});

describe('Function: codeModuleBundleArgs', () => {
  it('bundles a module whole: it loads with nothing installed beside it and its functions run', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sf-code-bundle-')), 'code', 'triage.mjs');
    const [bin, ...args] = codeModuleBundleArgs(join(ROOT, 'node_modules', '.bin', 'esbuild'), join(EXAMPLES, 'triage.ts'), out);
    execFileSync(bin!, args, { cwd: ROOT, stdio: 'pipe' });
    const text = readFileSync(out, 'utf8');
    // Only Node's own modules are imported: stepforge (the compiler's builders) is inside.
    expect([...text.matchAll(/^import .* from ["']([^"']+)["']/gm)].map((m) => m[1]).filter((s) => !/^(node:|module$)/.test(s!))).toEqual(
      [],
    );
    const mod = (await import(pathToFileURL(out).href)) as Record<string, unknown>;
    const classify = codeFunction(mod.triageGraph, 'classify', { codeFn: 'node' });
    expect(await classify!({ complaint: 'chest pain' })).toEqual({ category: 'urgent', reviews: 0 });
  }, 60_000);
});

describe('Function: buildApp (a workflows folder of modules, bundling skipped)', () => {
  it('synthesizes a state machine per exported workflow, its nodes on the function Lambda', () => {
    const { app, stack } = buildApp({
      projectRoot: ROOT,
      workflowsDir: EXAMPLES,
      handlersDir: join(ROOT, 'infra/test/fixtures/handlers'),
      appProps: { context: { 'aws:cdk:bundling-stacks': [] } },
    });
    const template = app.synth().getStackByName(stack.stackName).template as {
      Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
    };
    const machines = Object.values(template.Resources).filter((r) => r.Type === 'AWS::StepFunctions::StateMachine');
    expect(machines).toHaveLength(5);
    expect(stack.workflows.filter((w) => w.codeModule).map((w) => w.codeModule!.bundle)).toHaveLength(5);
    // The parent's role may start the child (startExecution.sync:2) and use the rule that reports its end.
    const statements = Object.values(template.Resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .flatMap((r) => (r.Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] }).Statement);
    const start = statements.find((st) => st.Action === 'states:StartExecution');
    expect(JSON.stringify(start!.Resource)).toContain(':stateMachine:refund-quote');
    expect(
      statements.some(
        (st) =>
          Array.isArray(st.Action) &&
          st.Action.includes('events:PutRule') &&
          JSON.stringify(st.Resource).includes('StepFunctionsGetEventsForStepFunctionsExecutionRule'),
      ),
    ).toBe(true);
    // The function Lambda may read the child's executions: a retried parent reuses the output of the one it started before.
    const describe = statements.find((st) => st.Action === 'states:DescribeExecution');
    expect(JSON.stringify(describe!.Resource)).toContain(':execution:refund-quote:');
  }, 120_000);
});

describe('Function: buildApp (a workflows folder of modules, bundled)', () => {
  it('bundles each module into the function Lambda asset under code/, where its nodes find it and its functions run', async () => {
    const outdir = mkdtempSync(join(tmpdir(), 'sf-code-synth-'));
    try {
      const { app } = buildApp({
        projectRoot: ROOT,
        workflowsDir: EXAMPLES,
        handlersDir: join(ROOT, 'infra/test/fixtures/handlers'),
        appProps: { outdir, context: { 'aws:cdk:enable-asset-metadata': true } },
      });
      app.synth();
      const assets = readdirSync(outdir).filter((d) => d.startsWith('asset.') && existsSync(join(outdir, d, 'code')));
      // One Lambda carries the modules: the function handler's.
      expect(assets).toHaveLength(1);
      const dir = join(outdir, assets[0]!);
      expect(readFileSync(join(dir, 'index.mjs'), 'utf8')).toContain('handler:"function"');
      expect(readdirSync(join(dir, 'code')).sort()).toEqual([
        'examples__code__clinical.mjs',
        'examples__code__refund.mjs',
        'examples__code__support.mjs',
        'examples__code__triage.mjs',
      ]);
      const mod = (await import(pathToFileURL(join(dir, 'code', 'examples__code__support.mjs')).href)) as Record<string, unknown>;
      const classify = codeFunction(mod.supportWorkflow, 'classify', {});
      expect(await classify!({ message: 'I want a refund' })).toEqual({ condition: 'refund', data: { topic: 'refund' } });
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('Function: buildApp (Kortyx workflow files, bundled)', () => {
  it('bundles each *.workflow.yaml|json as the module made of it into the function Lambda, where its nodes find it and its functions run', async () => {
    const outdir = mkdtempSync(join(tmpdir(), 'sf-kortyx-synth-'));
    try {
      const { app, stack } = buildApp({
        projectRoot: ROOT,
        workflowsDir: join(ROOT, 'examples', 'kortyx'),
        handlersDir: join(ROOT, 'infra/test/fixtures/handlers'),
        appProps: { outdir, context: { 'aws:cdk:enable-asset-metadata': true } },
      });
      app.synth();
      expect(stack.workflows.map((w) => [w.name, w.format, w.codeModule?.bundle])).toEqual([
        ['support-json', 'code', 'examples__kortyx__support.workflow.json.mjs'],
        ['support-file', 'code', 'examples__kortyx__support.workflow.yaml.mjs'],
      ]);
      expect(JSON.stringify(stack.workflows[1]!.asl)).toContain(
        '"codeModule":"/var/task/code/examples__kortyx__support.workflow.yaml.mjs"',
      );
      const assets = readdirSync(outdir).filter((d) => d.startsWith('asset.') && existsSync(join(outdir, d, 'code')));
      expect(assets).toHaveLength(1);
      const dir = join(outdir, assets[0]!);
      expect(readdirSync(join(dir, 'code')).sort()).toEqual([
        'examples__kortyx__support.workflow.json.mjs',
        'examples__kortyx__support.workflow.yaml.mjs',
      ]);
      for (const bundle of readdirSync(join(dir, 'code'))) {
        const mod = (await import(pathToFileURL(join(dir, 'code', bundle)).href)) as Record<string, unknown>;
        const classify = codeFunction(mod.workflow, 'classify', {});
        expect(await classify!({ message: 'I want a refund' })).toEqual({ condition: 'refund', data: { topic: 'refund' } });
      }
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }, 180_000);
});
