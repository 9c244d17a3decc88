import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { handlerEntry, LAMBDA_USER_FUNCTIONS_DIR, listUserFunctions } from '../lib/constructs/StepHandlers.js';
import { StepforgeStack } from '../lib/StepforgeStack.js';
import { loadWorkflows } from '../lib/workflows/loadWorkflows.js';
import { fixtureCompile } from './fixtures/fixtureCompile.js';
import { FIXTURE_MODEL, FIXTURE_WORKFLOWS, ROOT } from './synthFixtureStack.js';

const USER = join(ROOT, 'infra/test/fixtures/user');

describe('Class: StepHandlers', () => {
  let outdir: string;
  let template: Template;

  beforeAll(() => {
    process.env['CDK_VALIDATION'] = 'false';
    outdir = mkdtempSync(join(tmpdir(), 'stepforge-handlers-'));
    const app = new App({ outdir, context: { 'aws:cdk:enable-asset-metadata': true } });
    const stack = new StepforgeStack(app, 'Bundled', {
      workflows: loadWorkflows(FIXTURE_WORKFLOWS, { rootDir: ROOT, compile: fixtureCompile }),
      projectRoot: ROOT,
      handlersDir: join(ROOT, 'infra/test/fixtures/handlers'),
      userFunctionsDir: USER,
      models: { model: FIXTURE_MODEL },
    });
    template = Template.fromStack(stack);
  }, 300_000);

  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it('bundles user functions into the function Lambda under user/ and points the runtime there', () => {
    const fns = template.findResources('AWS::Lambda::Function');
    const id = Object.keys(fns).find((k) => k.startsWith('HandlersFunction'))!;
    const asset = fns[id]!.Metadata!['aws:asset:path'] as string;
    const bundled = join(outdir, asset, 'user', 'crm', 'enrich.mjs');
    expect(existsSync(bundled), bundled).toBe(true);
    expect(readFileSync(bundled, 'utf8')).toContain('enriched');
    expect(fns[id]!.Properties.Environment.Variables.STEPFORGE_FUNCTIONS_DIR).toBe(LAMBDA_USER_FUNCTIONS_DIR);
    const other = Object.keys(fns).find((k) => k.startsWith('HandlersModel'))!;
    expect(existsSync(join(outdir, fns[other]!.Metadata!['aws:asset:path'] as string, 'user'))).toBe(false);
    expect(fns[other]!.Properties.Environment.Variables.STEPFORGE_FUNCTIONS_DIR).toBeUndefined();
  });

  it('bundles every handler as an ESM index.mjs with the require shim', () => {
    for (const fn of Object.values(template.findResources('AWS::Lambda::Function'))) {
      const code = readFileSync(join(outdir, fn.Metadata!['aws:asset:path'] as string, 'index.mjs'), 'utf8');
      expect(code.startsWith("import{createRequire as __sfCreateRequire}from'module'")).toBe(true);
      expect(code).toContain('export');
      // ajv's own message: the --alias flags reached esbuild, so the MCP SDK's import of ajv
      // resolved to the adapter over @cfworker/json-schema.
      expect(code).not.toContain('schema with key or id');
    }
  });
});

describe('Function: listUserFunctions', () => {
  it('lists modules recursively and nothing for a missing folder', () => {
    expect(listUserFunctions(USER)).toEqual([join(USER, 'crm/enrich.ts')]);
    expect(listUserFunctions(join(ROOT, 'no/such/dir'))).toEqual([]);
    expect(listUserFunctions(undefined)).toEqual([]);
  });
});

describe('Function: handlerEntry', () => {
  it("finds a step handler's entry by the handler table's file name, and the others by their id", () => {
    expect(handlerEntry(join(ROOT, 'infra/test/fixtures/handlers'), 'mcpTool')).toBe(
      join(ROOT, 'infra/test/fixtures/handlers/mcp_tool.ts'),
    );
    expect(handlerEntry(join(ROOT, 'packages/runtime/src/handlers'), 'mcpTool')).toBe(
      join(ROOT, 'packages/runtime/src/handlers/mcp_tool.ts'),
    );
    expect(handlerEntry(join(ROOT, 'packages/runtime/src/handlers'), 'api')).toBe(join(ROOT, 'packages/runtime/src/handlers/api.ts'));
    expect(handlerEntry(join(ROOT, 'no/such/dir'), 'model')).toBeUndefined();
  });
});
