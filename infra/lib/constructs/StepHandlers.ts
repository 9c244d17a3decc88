// The Lambda functions: five step handlers (placeholders in ASL) plus the API, the trigger starter and
// the approvals consumer. One NodejsFunction per handler, bundled once by the local esbuild and shared by
// every workflow; each with its own role and log group so its permissions can be read off one policy.
// Beside them, when a workflow calls a Python function, the Python function Lambda (Python 3.12, a
// plain directory asset: the bootstrap in packages/runtime/python and the user's .py files, no Docker).
import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { ArnFormat, DockerImage, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { bedrockResourceArns } from '../models/bedrockResourceArns.js';
import { HANDLER_BUNDLE, SOURCE_MAP } from '../bundling/handlerBundling.js';
import { StackLogGroup, type LogSettings } from './StackLogGroup.js';
import { METRICS_NAMESPACE, pythonSourceDir } from '@stepforge/runtime';
import { ALL_HANDLERS, PYTHON_FUNCTION_HANDLER, STEP_HANDLER_TABLE, WORKFLOW_RECORD_HANDLER, type HandlerId } from '@stepforge/contract';
import { CODE_BUNDLE_ALIAS } from '../workflows/loadCodeWorkflows.js';

/** A Node Lambda of the stack: a handler, or the deploy-time writer of workflow records. */
type NodeLambdaId = HandlerId | typeof WORKFLOW_RECORD_HANDLER;

/** Sizing per handler: model and user-function steps get more memory and time than the glue handlers. */
const SIZING: Readonly<Record<NodeLambdaId, { memory: number; timeout: Duration }>> = {
  model: { memory: 512, timeout: Duration.minutes(5) },
  tool: { memory: 256, timeout: Duration.minutes(2) },
  connector: { memory: 256, timeout: Duration.minutes(1) },
  function: { memory: 512, timeout: Duration.minutes(5) },
  mcpTool: { memory: 256, timeout: Duration.minutes(2) },
  // API Gateway's integration timeout is 29 s.
  api: { memory: 256, timeout: Duration.seconds(29) },
  trigger: { memory: 256, timeout: Duration.seconds(30) },
  approvals: { memory: 256, timeout: Duration.seconds(30) },
  // A few small writes per workflow at deploy time.
  workflowRecord: { memory: 256, timeout: Duration.minutes(1) },
};

/** Options for StepHandlers. */
export interface StepHandlersProps {
  /** Repository root: the esbuild working directory and where package-lock.json lives. */
  readonly projectRoot: string;
  /** Directory holding `<handler>.ts` entry files (packages/runtime/src/handlers). */
  readonly handlersDir: string;
  /** Environment shared by every handler (table name, queue URL, …). */
  readonly environment: Readonly<Record<string, string>>;
  /** Destroy log groups with the stack. */
  readonly destroyOnRemoval?: boolean;
  /** The handlers' log groups: key and retention (the log groups are destroyed with the stack when `destroyOnRemoval`). */
  readonly logs: Omit<LogSettings, 'destroyOnRemoval'>;
  /** Entry files that replace `<handlersDir>/<name>.ts` for some handlers (the API adapter). */
  readonly entryOverrides?: Partial<Record<HandlerId, string>>;
  /** Ship source maps with the bundles and turn them on (`--enable-source-maps`); off by default: they more than double each asset and slow cold starts. */
  readonly sourceMaps?: boolean;
  /** User function modules (functions/user), bundled into the function Lambda under `user/`. */
  readonly userFunctionsDir?: string;
  /**
   * Modules of workflows written in code, each bundled whole into the function Lambda as
   * `code/<bundle>`; a Kortyx workflow file as the module made of it (`generated`, imports absolute).
   */
  readonly codeModules?: readonly { readonly source: string; readonly bundle: string; readonly generated?: string }[];
  /**
   * Deploy the Python function Lambda too (a workflow has a function step whose function is a
   * Python module): Python 3.12, its code the bootstrap (packages/runtime/python) and the `.py` files of
   * `userFunctionsDir` under `user/`, a plain asset (no Docker, no wheels).
   */
  readonly python?: boolean;
}

/** Where the function Lambda finds the bundled user functions (its code root is /var/task). */
export const LAMBDA_USER_FUNCTIONS_DIR = '/var/task/user';

/** The Python function Lambda's entry point (packages/runtime/python/stepforge_lambda.py). */
export const PYTHON_FUNCTION_ENTRY = 'stepforge_lambda.handler';
/** The bootstrap's files, at the root of the Python function Lambda's code. */
const PYTHON_BOOTSTRAP = ['stepforge_lambda.py', 'stepforge_userfn.py'] as const;

/** The deployed handlers, by name. */
export class StepHandlers extends Construct {
  readonly functions: Readonly<Record<HandlerId, NodejsFunction>>;
  /** The Python function Lambda, when the stack has Python function steps. */
  readonly pythonFunction?: lambda.Function;
  /** The custom resource Lambda that writes each workflow's record at deploy time (`<handlersDir>/workflowRecord.ts`). */
  readonly workflowRecord: NodejsFunction;

  constructor(scope: Construct, id: string, props: StepHandlersProps) {
    super(scope, id);
    assertLocalEsbuild();
    const entry = (h: NodeLambdaId) =>
      (h === WORKFLOW_RECORD_HANDLER ? undefined : props.entryOverrides?.[h]) ?? handlerEntry(props.handlersDir, h);
    const missing = ([...ALL_HANDLERS, WORKFLOW_RECORD_HANDLER] as NodeLambdaId[]).filter(
      (h) => entry(h) === undefined || !existsSync(entry(h)!),
    );
    if (missing.length > 0) {
      throw new Error(`handler entry files missing in ${props.handlersDir}: ${missing.map((h) => `${h}.ts`).join(', ')}`);
    }
    const fns = {} as Record<HandlerId, NodejsFunction>;
    for (const name of ALL_HANDLERS) fns[name] = this.handler(name, entry(name)!, props);
    this.functions = fns;
    this.workflowRecord = this.handler(WORKFLOW_RECORD_HANDLER, entry(WORKFLOW_RECORD_HANDLER)!, props);
    if (props.python) this.pythonFunction = this.pythonHandler(props);
  }

  /** What every handler has: its sizing, arm64, X-Ray, its own log group and a role that may write there and nothing else (grants come later). */
  private baseProps(id: string, name: string, sizing: keyof typeof SIZING, props: StepHandlersProps) {
    const { role, logGroup } = this.roleAndLogs(id, name, props);
    const { memory, timeout } = SIZING[sizing];
    return { role, logGroup, memorySize: memory, timeout, architecture: lambda.Architecture.ARM_64, tracing: lambda.Tracing.ACTIVE };
  }

  private roleAndLogs(id: string, name: string, props: StepHandlersProps): { role: iam.Role; logGroup: logs.LogGroup } {
    const logGroup = new StackLogGroup(this, `${id}Logs`, { ...props.logs, destroyOnRemoval: props.destroyOnRemoval });
    // An explicit role instead of AWSLambdaBasicExecutionRole: logs only to this function's own group.
    const role = new iam.Role(this, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Stepforge ${name} handler`,
    });
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [logGroup.logGroupArn, `${logGroup.logGroupArn}:log-stream:*`],
      }),
    );
    return { role, logGroup };
  }

  private handler(name: NodeLambdaId, entry: string, props: StepHandlersProps): NodejsFunction {
    const id = name[0]!.toUpperCase() + name.slice(1);
    const userFunctions = name === 'function' ? listUserFunctions(props.userFunctionsDir) : [];
    const codeModules = name === 'function' ? (props.codeModules ?? []) : [];
    const esbuildBin = join(props.projectRoot, 'node_modules', '.bin', 'esbuild');
    return new NodejsFunction(this, id, {
      ...this.baseProps(id, name, name, props),
      entry,
      handler: 'handler',
      runtime: lambda.Runtime.NODEJS_22_X,
      environment: {
        ...props.environment,
        STEPFORGE_HANDLER: name,
        POWERTOOLS_SERVICE_NAME: `stepforge-${name}`,
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        ...(props.sourceMaps ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
        ...(name === 'function' ? { STEPFORGE_FUNCTIONS_DIR: LAMBDA_USER_FUNCTIONS_DIR } : {}),
      },
      projectRoot: props.projectRoot,
      depsLockFilePath: join(props.projectRoot, 'package-lock.json'),
      bundling: {
        forceDockerBundling: false,
        // Never built: local esbuild is asserted above, so Docker is never needed; this only stops
        // the construct from preparing a Docker build image when esbuild detection fails.
        dockerImage: DockerImage.fromRegistry('stepforge/no-docker-bundling'),
        format: OutputFormat.ESM,
        target: HANDLER_BUNDLE.target,
        minify: HANDLER_BUNDLE.minify,
        sourceMap: props.sourceMaps === true,
        ...(props.sourceMaps ? { sourcesContent: SOURCE_MAP.sourcesContent } : {}),
        logLevel: LogLevel.WARNING,
        mainFields: [...HANDLER_BUNDLE.mainFields],
        // The root tsconfig maps @stepforge/* to their sources, so bundles never pick up a stale dist/.
        tsconfig: join(props.projectRoot, 'tsconfig.json'),
        externalModules: [...HANDLER_BUNDLE.external],
        banner: HANDLER_BUNDLE.banner,
        define: { ...HANDLER_BUNDLE.define },
        // NodejsFunction has no alias option: esbuild's own flag, one per package.
        esbuildArgs: Object.fromEntries(Object.entries(HANDLER_BUNDLE.alias).map(([pkg, path]) => [`--alias:${pkg}`, path])),
        // The runtime imports user functions from a folder at run time; compile each into the asset's user/.
        // A code workflow's module goes into code/, self-contained (packages included but the AWS SDK):
        // its nodes name it there (loadCodeWorkflows).
        commandHooks:
          userFunctions.length > 0 || codeModules.length > 0
            ? {
                beforeBundling: () => [],
                beforeInstall: () => [],
                afterBundling: (inputDir: string, outputDir: string) => [
                  ...codeModules.flatMap((m) =>
                    codeModuleBundleCommands(
                      esbuildBin,
                      m,
                      join(inputDir, relative(props.projectRoot, m.source)),
                      join(outputDir, 'code', m.bundle),
                    ),
                  ),
                  ...(userFunctions.length === 0
                    ? []
                    : [
                        [
                          esbuildBin,
                          ...userFunctions.map((f) => join(inputDir, relative(props.projectRoot, f))),
                          '--bundle',
                          '--platform=node',
                          '--format=esm',
                          '--target=node22',
                          `--outbase=${join(inputDir, relative(props.projectRoot, props.userFunctionsDir!))}`,
                          `--outdir=${join(outputDir, 'user')}`,
                          '--out-extension:.js=.mjs',
                          '--external:@aws-sdk/*',
                        ]
                          .map(shellQuote)
                          .join(' '),
                      ]),
                ],
              }
            : undefined,
      },
    });
  }

  /** The Python function Lambda: the same envelope, records and sizing as the Node function handler, in Python 3.12. */
  private pythonHandler(props: StepHandlersProps): lambda.Function {
    return new lambda.Function(this, 'PythonFunction', {
      ...this.baseProps('PythonFunction', PYTHON_FUNCTION_HANDLER, 'function', props),
      runtime: lambda.Runtime.PYTHON_3_12,
      handler: PYTHON_FUNCTION_ENTRY,
      code: lambda.Code.fromAsset(stagePythonAsset(pythonSourceDir(), props.userFunctionsDir)),
      environment: {
        ...props.environment,
        STEPFORGE_HANDLER: PYTHON_FUNCTION_HANDLER,
        POWERTOOLS_SERVICE_NAME: 'stepforge-python-function',
        STEPFORGE_FUNCTIONS_DIR: LAMBDA_USER_FUNCTIONS_DIR,
      },
    });
  }

  /** A step handler by name, the Python function Lambda included (when deployed). */
  lambdaOf(name: HandlerId | typeof PYTHON_FUNCTION_HANDLER): lambda.Function {
    if (name !== PYTHON_FUNCTION_HANDLER) return this.functions[name];
    if (!this.pythonFunction) throw new Error('the stack has no Python function Lambda: no workflow has a Python function step');
    return this.pythonFunction;
  }

  /** Let a handler read the named secrets (Secrets Manager secret or SSM parameter with that id) and nothing else. */
  grantSecrets(name: HandlerId | typeof PYTHON_FUNCTION_HANDLER, ids: readonly string[], ssmPrefix: string): void {
    if (ids.length === 0) return;
    const stack = Stack.of(this);
    const fn = this.lambdaOf(name);
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'],
        // Secrets Manager appends a 6-character random suffix to every secret ARN.
        resources: ids.map((id) =>
          stack.formatArn({
            service: 'secretsmanager',
            resource: 'secret',
            resourceName: `${id}-??????`,
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        ),
      }),
    );
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['ssm:GetParameter'],
        resources: ids.map((id) =>
          stack.formatArn({
            service: 'ssm',
            resource: 'parameter',
            resourceName: `${ssmPrefix}${id}`.replace(/^\/+/, ''),
            arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
          }),
        ),
      }),
    );
  }

  /**
   * Let the model handler call exactly these Bedrock models (ids or inference profiles). Converse,
   * the only Bedrock call the provider makes, is authorised by `bedrock:InvokeModel` (IAM has no
   * separate Converse action); the provider never streams, so no InvokeModelWithResponseStream.
   */
  grantBedrockModels(modelIds: readonly string[]): void {
    if (modelIds.length === 0) return;
    const stack = Stack.of(this);
    const resources = [...new Set(modelIds.flatMap((id) => bedrockResourceArns(stack, id)))];
    this.functions.model.addToRolePolicy(new iam.PolicyStatement({ actions: ['bedrock:InvokeModel'], resources }));
  }
}

/** User function modules (.ts/.mts/.js/.mjs, recursively) in `dir`, or none when it does not exist. */
export function listUserFunctions(dir: string | undefined): string[] {
  if (!dir || !existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(m?ts|m?js)$/.test(e.name) && !/\.(test|d)\.m?ts$/.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** Python user function modules (.py, recursively, leaving out tests and caches) in `dir`, or none when it does not exist. */
export function listPythonFunctions(dir: string | undefined): string[] {
  if (!dir || !existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.py') && !/^test_|_test\.py$/.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .filter(
      (f) =>
        !relative(dir, f)
          .split(/[\\/]/)
          .some((part) => part === '__pycache__' || part.startsWith('.')),
    )
    .sort();
}

/**
 * The Python function Lambda's code as one folder: the bootstrap at its root, the user's `.py`
 * files under `user/` with their folders. A plain directory asset, which CDK hashes and zips. The
 * folder is named after its content (in the system's temporary folder), so every synth of the same
 * files reuses one folder rather than leaving another behind.
 */
export function stagePythonAsset(sourceDir: string, userFunctionsDir: string | undefined): string {
  const files: [string, Buffer][] = [
    ...PYTHON_BOOTSTRAP.map((f): [string, Buffer] => [f, readFileSync(join(sourceDir, f))]),
    ...listPythonFunctions(userFunctionsDir).map((f): [string, Buffer] => [join('user', relative(userFunctionsDir!, f)), readFileSync(f)]),
  ];
  const hash = createHash('sha256');
  for (const [name, data] of files) hash.update(`${name}\0${data.length}\0`).update(data);
  const out = join(tmpdir(), `stepforge-python-${hash.digest('hex').slice(0, 24)}`);
  if (existsSync(out)) return out;
  // Written beside, then renamed into place: a synth running at the same time sees it whole or not at all.
  const partial = mkdtempSync(`${out}.partial-`);
  for (const [name, data] of files) {
    mkdirSync(dirname(join(partial, name)), { recursive: true });
    writeFileSync(join(partial, name), data);
  }
  try {
    renameSync(partial, out);
  } catch (e) {
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(out)) throw e;
  }
  return out;
}

/** The esbuild command line that bundles a code workflow's module, whole, to `outFile` (ESM for Node 22). */
export function codeModuleBundleArgs(esbuildBin: string, source: string, outFile: string): string[] {
  return [
    esbuildBin,
    source,
    '--bundle',
    '--platform=node',
    '--format=esm',
    '--target=node22',
    ...Object.entries(CODE_BUNDLE_ALIAS).map(([from, to]) => `--alias:${from}=${to}`),
    `--outfile=${outFile}`,
    '--external:@aws-sdk/*',
    // ESM bundles of CommonJS dependencies still call require().
    "--banner:js=import{createRequire as __sfCreateRequire}from'module';const require=__sfCreateRequire(import.meta.url);",
  ];
}

/**
 * The commands that bundle one code module into the asset. A Kortyx workflow file has no module on
 * disk: the module made of it is written to a folder of its own when the commands are made, bundled
 * from there (its imports are absolute) and the folder removed.
 */
function codeModuleBundleCommands(esbuildBin: string, m: { readonly generated?: string }, source: string, outFile: string): string[] {
  if (m.generated === undefined) return [codeModuleBundleArgs(esbuildBin, source, outFile).map(shellQuote).join(' ')];
  const dir = mkdtempSync(join(tmpdir(), 'stepforge-kortyx-'));
  const entry = join(dir, 'workflow.mjs');
  writeFileSync(entry, m.generated);
  return [codeModuleBundleArgs(esbuildBin, entry, outFile).map(shellQuote).join(' '), ['rm', '-rf', dir].map(shellQuote).join(' ')];
}

function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The entry file of a handler: a step handler's from the handler table, `<name>.ts` for the others. */
export function handlerEntry(dir: string, name: HandlerId | typeof WORKFLOW_RECORD_HANDLER): string | undefined {
  const step = STEP_HANDLER_TABLE.find((h) => h.id === name);
  const path = join(dir, `${step?.entry ?? name}.ts`);
  return existsSync(path) ? path : undefined;
}

/** Synth must never fall back to Docker: fail early, with the fix, when the local esbuild is missing. */
function assertLocalEsbuild(): void {
  try {
    createRequire(import.meta.url).resolve('esbuild');
  } catch {
    throw new Error('esbuild is not installed locally; run `npm ci` (infra bundles Lambdas with the local esbuild, never Docker)');
  }
}
