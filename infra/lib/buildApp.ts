// Builds the CDK app: compile workflows/, create the stack, run cdk-nag AwsSolutions on everything.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Annotations, App, Validations, type AppProps } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readPolicyText } from '@stepforge/runtime';
import { StepforgeError } from '@stepforge/contract';
import { StepforgeStack } from './StepforgeStack.js';
import type { ModelOptions } from './models/planModels.js';
import type { ApiAuthMode } from './constructs/StepforgeApi.js';
import type { CompileDocumentFn } from './workflows/compilerBinding.js';
import { loadWorkflows } from './workflows/loadWorkflows.js';

/** Options for buildApp (tests pass their own; `cdk synth` uses the context). */
export interface BuildAppOptions {
  readonly projectRoot: string;
  readonly workflowsDir?: string;
  readonly handlersDir?: string;
  readonly userFunctionsDir?: string;
  readonly compile?: CompileDocumentFn;
  readonly appProps?: AppProps;
}

const AUTH_MODES: readonly ApiAuthMode[] = ['iam', 'apiKey', 'cognito'];

/** The app with one StepforgeStack and cdk-nag attached; context keys are documented in docs/deploy.md. */
export function buildApp(options: BuildAppOptions): { app: App; stack: StepforgeStack } {
  const app = new App(options.appProps);
  const ctx = (key: string): string | undefined => {
    const v: unknown = app.node.tryGetContext(key);
    return v === undefined || v === null || v === '' ? undefined : String(v);
  };
  const apiAuth = (ctx('apiAuth') ?? 'iam') as ApiAuthMode;
  if (!AUTH_MODES.includes(apiAuth)) throw new Error(`context apiAuth must be one of ${AUTH_MODES.join(', ')} (got "${apiAuth}")`);
  const workflows = loadWorkflows(options.workflowsDir ?? join(options.projectRoot, 'workflows'), {
    rootDir: options.projectRoot,
    compile: options.compile,
  });
  const workflowsDir = options.workflowsDir ?? join(options.projectRoot, 'workflows');
  const policyFile = join(workflowsDir, 'policy.json');
  let policyRules: unknown[] | undefined;
  // Read as the runtime reads it: a policy that is not a valid array of rules fails the synth
  // (policy_invalid, with its line and column) rather than deploying handlers that gate nothing.
  if (existsSync(policyFile)) policyRules = readPolicyText(readFileSync(policyFile, 'utf8'), { file: policyFile });
  const allowOffline = ctx('allowOfflineModel');
  if (allowOffline !== undefined && allowOffline !== 'true' && allowOffline !== 'false') {
    throw new StepforgeError('invalid_model_option', `context allowOfflineModel must be true or false (got "${allowOffline}")`, {
      hint: '-c allowOfflineModel=true',
    });
  }
  const retention = ctx('logRetentionDays');
  if (retention !== undefined && !/^\d+$/.test(retention)) {
    throw new StepforgeError('invalid_log_retention', `context logRetentionDays must be a number of days (got "${retention}")`, {
      hint: '-c logRetentionDays=365',
    });
  }
  const logExecutionData = ctx('logExecutionData');
  if (logExecutionData !== undefined && logExecutionData !== 'true' && logExecutionData !== 'false') {
    throw new StepforgeError('invalid_log_option', `context logExecutionData must be true or false (got "${logExecutionData}")`, {
      hint: '-c logExecutionData=true',
    });
  }
  const models: ModelOptions = {
    ...(ctx('modelProvider') !== undefined ? { provider: ctx('modelProvider') } : {}),
    ...(ctx('model') !== undefined ? { model: ctx('model') } : {}),
    ...(ctx('openaiApiKeySecret') !== undefined ? { openaiApiKeySecret: ctx('openaiApiKeySecret') } : {}),
    ...(ctx('openaiBaseUrl') !== undefined ? { openaiBaseUrl: ctx('openaiBaseUrl') } : {}),
    allowOffline: allowOffline === 'true',
  };
  const stack = new StepforgeStack(app, ctx('stackName') ?? 'Stepforge', {
    workflows,
    projectRoot: options.projectRoot,
    handlersDir: options.handlersDir ?? join(options.projectRoot, 'packages', 'runtime', 'src', 'handlers'),
    userFunctionsDir: options.userFunctionsDir ?? join(options.projectRoot, 'functions', 'user'),
    apiAuth,
    destroyOnRemoval: ctx('destroyOnRemoval') === 'true',
    alarmEmail: ctx('alarmEmail'),
    models,
    ...(retention !== undefined ? { logRetentionDays: Number(retention) } : {}),
    logExecutionData: logExecutionData === 'true',
    sourceMaps: ctx('sourceMaps') === 'true',
    policyRules,
    env: { account: process.env['CDK_DEFAULT_ACCOUNT'], region: process.env['CDK_DEFAULT_REGION'] },
    description: 'Stepforge: agent workflows on Step Functions, Lambda, DynamoDB, SQS, API Gateway and EventBridge',
  });
  for (const wf of workflows) {
    if (wf.expressFallbackReason) {
      // Visible in `cdk synth` output; the machine is deployed as Standard.
      Annotations.of(stack).addWarningV2(
        'stepforge:expressFallback',
        `workflow ${wf.name} asked for Express but deploys as Standard: ${wf.expressFallbackReason}`,
      );
    }
  }
  // cdk-nag v3 runs as a policy-validation plugin: any unacknowledged finding fails `cdk synth`.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return { app, stack };
}
