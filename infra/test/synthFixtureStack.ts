// Builds the app over the fixture workflows and fixture handler entries once per test file, with
// Lambda bundling skipped (the real bundling is exercised by realWorkflows.test.ts).
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { buildApp } from '../lib/buildApp.js';
import type { StepforgeStack } from '../lib/StepforgeStack.js';
import { fixtureCompile } from './fixtures/fixtureCompile.js';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Fixture workflow documents. */
export const FIXTURE_WORKFLOWS = join(ROOT, 'infra/test/fixtures/workflows');

/** The project model the fixture app deploys with (two fixture steps name none). */
export const FIXTURE_MODEL = 'bedrock:amazon.nova-micro-v1:0';

/** Synthesize the fixture app with the given context; bundling is skipped. */
export function synthFixtureStack(context: Record<string, unknown> = {}): { app: App; stack: StepforgeStack; template: Template } {
  const { app, stack } = buildApp({
    projectRoot: ROOT,
    workflowsDir: FIXTURE_WORKFLOWS,
    handlersDir: join(ROOT, 'infra/test/fixtures/handlers'),
    compile: fixtureCompile,
    appProps: { context: { 'aws:cdk:bundling-stacks': [], model: FIXTURE_MODEL, ...context } },
  });
  return { app, stack, template: Template.fromStack(stack) };
}
