// The Python function Lambda in the synthesized stack: a workflow compiled by the real compiler whose
// function steps call a Python module (at top level and inside a for_each Map) and a JavaScript one.
// The Python steps' Tasks must target the Python 3.12 Lambda (through DefinitionSubstitutions), its
// asset must hold the bootstrap and the user's .py files and nothing else, and its grants must be
// its own. cdk-nag runs over the whole app, as `cdk synth` does.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Template } from 'aws-cdk-lib/assertions';
import { compileDocument } from '@stepforge/compiler';
import { buildApp } from '../lib/buildApp.js';
import { PYTHON_FUNCTION_ENTRY, LAMBDA_USER_FUNCTIONS_DIR, listPythonFunctions } from '../lib/constructs/StepHandlers.js';
import { routePythonFunctions } from '../lib/workflows/routePythonFunctions.js';
import { loadWorkflow } from '../lib/workflows/loadWorkflows.js';
import { compilerCompileDocument } from '../lib/workflows/compilerBinding.js';
import { ROOT } from './synthFixtureStack.js';

type Resource = { Type: string; Properties: Record<string, any>; Metadata?: Record<string, any> };

const WORKFLOW = [
  'document: { dsl: "1.0", name: news-digest, version: "0.1.0" }',
  'functions: { fetch_news: {}, text/summarise: {}, format: {} }',
  'secrets:',
  '  news: $secret:news/api-key',
  '  crm: $secret:crm/token',
  'input: { topics: array }',
  'steps:',
  '  each:',
  '    call: for_each',
  '    items: ${ input.topics }',
  '    max_iterations: 5',
  '    do:',
  '      fetch:',
  '        call: function',
  '        function: fetch_news',
  '        secrets: { API_KEY: news }',
  '        input: { query: "${ input.item }" }',
  '  summary:',
  '    call: function',
  '    function: text/summarise',
  '    input: { items: "${ steps.each.output }" }',
  '  render:',
  '    call: function',
  '    function: format',
  '    secrets: { token: crm }',
  '    input: { text: "${ steps.summary.output }" }',
  '',
].join('\n');

const work = mkdtempSync(join(tmpdir(), 'sf-infra-py-'));
const workflowsDir = join(work, 'workflows');
const userDir = join(work, 'user');
let outdir: string;
let template: Template;
let resources: Record<string, Resource>;

beforeAll(() => {
  process.env['CDK_VALIDATION'] = 'false';
  mkdirSync(workflowsDir);
  mkdirSync(join(userDir, 'text', '__pycache__'), { recursive: true });
  writeFileSync(join(workflowsDir, 'news.yaml'), WORKFLOW);
  writeFileSync(join(userDir, 'fetch_news.py'), 'async def fetch_news(query="", API_KEY="", **kwargs):\n    return {"query": query}\n');
  writeFileSync(join(userDir, 'text', 'summarise.py'), 'def handler(input, context):\n    return len(input["items"])\n');
  writeFileSync(join(userDir, 'text', '__pycache__', 'summarise.cpython-312.pyc'), '');
  writeFileSync(join(userDir, 'test_fetch_news.py'), 'def test_it():\n    pass\n');
  writeFileSync(join(userDir, 'format.ts'), 'export default async (input: { text: string }) => `<p>${input.text}</p>`;\n');
  outdir = mkdtempSync(join(tmpdir(), 'stepforge-synth-py-'));
  const { app, stack } = buildApp({
    projectRoot: ROOT,
    workflowsDir,
    userFunctionsDir: userDir,
    handlersDir: join(ROOT, 'infra/test/fixtures/handlers'),
    appProps: { outdir, context: { 'aws:cdk:bundling-stacks': [], 'aws:cdk:enable-asset-metadata': true } },
  });
  // Throws when cdk-nag reports an unacknowledged finding.
  const assembly = app.synth();
  template = Template.fromJSON(assembly.getStackByName(stack.stackName).template);
  resources = template.toJSON().Resources as Record<string, Resource>;
}, 300_000);

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
  rmSync(outdir, { recursive: true, force: true });
});

const logicalId = (type: string, prefix: string) => {
  const ids = Object.keys(resources).filter((id) => resources[id]!.Type === type && id.startsWith(prefix));
  expect(ids, `${type} ${prefix}`).toHaveLength(1);
  return ids[0]!;
};

/** Every action → resources statement of the inline policies of the role whose logical id starts with `prefix`. */
const statementsOf = (prefix: string) => {
  const role = logicalId('AWS::IAM::Role', prefix);
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && (r.Properties.Roles as { Ref: string }[]).some((x) => x.Ref === role))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]);
};

describe('Construct: the Python function Lambda', () => {
  it("is a Python 3.12 Lambda whose handler is the bootstrap, with the runtime's environment", () => {
    const fn = resources[logicalId('AWS::Lambda::Function', 'HandlersPythonFunction')]!;
    expect(fn.Properties).toMatchObject({
      Runtime: 'python3.12',
      Handler: PYTHON_FUNCTION_ENTRY,
      Architectures: ['arm64'],
      MemorySize: 512,
      Timeout: 300,
      TracingConfig: { Mode: 'Active' },
    });
    expect(PYTHON_FUNCTION_ENTRY).toBe('stepforge_lambda.handler');
    expect(fn.Properties.Environment.Variables).toMatchObject({
      STEPFORGE_MODE: 'aws',
      STEPFORGE_FUNCTIONS_DIR: LAMBDA_USER_FUNCTIONS_DIR,
      STEPFORGE_SECRETS_BACKEND: 'secretsmanager',
      STEPFORGE_HANDLER: 'pythonFunction',
      STEPFORGE_TABLE: { Ref: expect.stringMatching(/^StoreRuns/) },
    });
  });

  it("is a plain directory asset: the bootstrap at its root, the user's Python modules under user/, nothing else", () => {
    const fn = resources[logicalId('AWS::Lambda::Function', 'HandlersPythonFunction')]!;
    const asset = join(outdir, fn.Metadata!['aws:asset:path'] as string);
    const files = readdirSync(asset, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => relative(asset, join(e.parentPath, e.name)))
      .sort();
    expect(files).toEqual(['stepforge_lambda.py', 'stepforge_userfn.py', 'user/fetch_news.py', 'user/text/summarise.py']);
    expect(listPythonFunctions(userDir).map((f) => relative(userDir, f))).toEqual(['fetch_news.py', 'text/summarise.py']);
  });

  it("is the Resource of the Python steps' Tasks, inside the Map too, while the JavaScript step keeps the Node function Lambda", () => {
    const sm = resources[logicalId('AWS::StepFunctions::StateMachine', 'WorkflownewsdigestStateMachine')]!.Properties;
    const definition = JSON.parse(sm.DefinitionString as string) as { States: Record<string, any> };
    const map = definition.States['each']!;
    expect(map.Type).toBe('Map');
    expect(map.ItemProcessor.States['fetch'].Resource).toBe('${PythonFunctionStepFunctionArn}');
    expect(definition.States['summary'].Resource).toBe('${PythonFunctionStepFunctionArn}');
    expect(definition.States['render'].Resource).toBe('${FunctionStepFunctionArn}');
    expect(sm.DefinitionSubstitutions.PythonFunctionStepFunctionArn).toEqual({
      'Fn::GetAtt': [logicalId('AWS::Lambda::Function', 'HandlersPythonFunction'), 'Arn'],
    });
    expect(sm.DefinitionSubstitutions.FunctionStepFunctionArn).toEqual({
      'Fn::GetAtt': [logicalId('AWS::Lambda::Function', 'HandlersFunction'), 'Arn'],
    });
    // Nothing else of the definition changed: it is the compiler's, with those Resources.
    const compiled = compileDocument(WORKFLOW, { file: relative(ROOT, join(workflowsDir, 'news.yaml')) }).asl as {
      States: Record<string, any>;
    };
    compiled.States['each'].ItemProcessor.States['fetch'].Resource = '${PythonFunctionStepFunctionArn}';
    compiled.States['summary'].Resource = '${PythonFunctionStepFunctionArn}';
    expect(definition).toEqual(compiled);
  });

  it('may be invoked by the state machine, reaches the run table, and reads only the secrets its steps bind', () => {
    const invoke = statementsOf('WorkflownewsdigestStateMachineRole').filter((s) => [s.Action].flat().includes('lambda:InvokeFunction'));
    expect(JSON.stringify(invoke)).toContain(logicalId('AWS::Lambda::Function', 'HandlersPythonFunction'));
    const python = statementsOf('HandlersPythonFunctionRole');
    expect(python.some((s) => [s.Action].flat().includes('dynamodb:PutItem'))).toBe(true);
    const secretsOf = (prefix: string) =>
      JSON.stringify(statementsOf(prefix).filter((s) => [s.Action].flat().includes('secretsmanager:GetSecretValue')));
    expect(secretsOf('HandlersPythonFunctionRole')).toContain('news/api-key-??????');
    expect(secretsOf('HandlersPythonFunctionRole')).not.toContain('crm/token');
    expect(secretsOf('HandlersFunctionRole')).toContain('crm/token-??????');
    expect(secretsOf('HandlersFunctionRole')).not.toContain('news/api-key');
  });
});

describe('Function: routePythonFunctions', () => {
  const spec = () => loadWorkflow(WORKFLOW, 'workflows/news.yaml', compilerCompileDocument());

  it('leaves a workflow without Python functions as it is', () => {
    const jsOnly = mkdtempSync(join(tmpdir(), 'sf-js-only-'));
    try {
      writeFileSync(join(jsOnly, 'format.ts'), 'export default async () => 1;\n');
      const s = spec();
      expect(routePythonFunctions(s, jsOnly)).toEqual({ workflow: s, pythonModules: [] });
      expect(routePythonFunctions(s, undefined)).toEqual({ workflow: s, pythonModules: [] });
      expect(existsSync(join(jsOnly, 'fetch_news.py'))).toBe(false);
    } finally {
      rmSync(jsOnly, { recursive: true, force: true });
    }
  });

  it('fails the synth when a name finds both a Python and a JavaScript module', () => {
    const both = mkdtempSync(join(tmpdir(), 'sf-both-'));
    try {
      writeFileSync(join(both, 'format.py'), 'def handler(input, context):\n    return 1\n');
      writeFileSync(join(both, 'format.ts'), 'export default async () => 1;\n');
      let message = '';
      try {
        routePythonFunctions(spec(), both);
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).toBe(
        `workflows/news.yaml: function "format" is ambiguous: the functions folder (${basename(both)}) has both format.py and format.ts; ` +
          'name the one to run with its extension (function: format.py or function: format.ts, declared under functions: with the same name), or remove the other',
      );
    } finally {
      rmSync(both, { recursive: true, force: true });
    }
  });

  it('points a lambda:invoke Task (FunctionName) at the Python Lambda too', () => {
    const s = spec();
    const asl = {
      StartAt: 'a',
      States: {
        a: {
          Type: 'Task',
          Resource: 'arn:aws:states:::lambda:invoke',
          Arguments: {
            FunctionName: '${FunctionStepFunctionArn}',
            Payload: { config: { function: 'fetch_news' }, secrets: ['news/api-key'] },
          },
          End: true,
        },
      },
    };
    const routed = routePythonFunctions({ ...s, asl, secretsByHandler: { function: ['news/api-key'] } }, userDir);
    expect((routed.workflow.asl as typeof asl).States.a.Arguments.FunctionName).toBe('${PythonFunctionStepFunctionArn}');
    expect(routed.workflow.placeholders).toEqual(['PythonFunctionStepFunctionArn']);
    expect(routed.workflow.secretsByHandler).toEqual({ pythonFunction: ['news/api-key'] });
    expect(routed.pythonModules).toEqual(['fetch_news.py']);
  });
});
