import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateStateMachineCommand, DescribeExecutionCommand, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { main } from '../src/main.js';
import { serveHooks, type ServeHandle } from '../src/commands/serve.js';

const ROLE = 'arn:aws:iam::123456789012:role/test';

/** Runs `serve` with `args` in `dir`; resolves with the exit code and what it printed (closing it once listening). */
async function serve(
  dir: string,
  args: string[],
  whileListening?: (h: ServeHandle) => Promise<void>,
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  serveHooks.onListening = (h) => {
    void (async () => {
      try {
        await whileListening?.(h);
      } finally {
        await h.close();
      }
    })();
  };
  try {
    const code = await main(['serve', '--port', '0', ...args], {
      out: (t) => {
        out += t;
      },
      err: (t) => {
        err += t;
      },
      isTTY: false,
      cwd: dir,
      env: { STEPFORGE_LOG_LEVEL: 'SILENT' },
    });
    return { code, out, err };
  } finally {
    delete serveHooks.onListening;
  }
}

describe('serve --lambda NAME=MODULE', () => {
  it("registers the module's handler, which state machines call by name, by ARN and through lambda:invoke", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-lambda-'));
    try {
      writeFileSync(
        join(dir, 'greet.mjs'),
        'export async function handler(event, context) { return { greeting: `hello ${event.who}`, fn: context.functionName }; }\n',
      );
      writeFileSync(join(dir, 'shout.cjs'), 'exports.handler = async (event) => String(event.text).toUpperCase();\n');
      const outputs: unknown[] = [];
      const { code, out, err } = await serve(dir, ['--lambda', 'greet=greet.mjs', '--lambda', 'shout=./shout.cjs'], async (h) => {
        const { credentials } = JSON.parse(readFileSync(join(dir, '.stepforge', 'stack.json'), 'utf8')) as {
          credentials: { accessKeyId: string; secretAccessKey: string };
        };
        const sfn = new SFNClient({ endpoint: h.sfnEndpoint, region: 'us-east-1', credentials, maxAttempts: 1 });
        try {
          const definition = JSON.stringify({
            StartAt: 'ByName',
            States: {
              ByName: {
                Type: 'Task',
                Resource: 'arn:aws:states:::lambda:invoke',
                Parameters: { FunctionName: 'greet', 'Payload.$': '$' },
                OutputPath: '$.Payload',
                Next: 'ByArn',
              },
              ByArn: {
                Type: 'Task',
                Resource: 'arn:aws:lambda:us-east-1:123456789012:function:shout',
                Parameters: { 'text.$': '$.greeting' },
                End: true,
              },
            },
          });
          const { stateMachineArn } = await sfn.send(new CreateStateMachineCommand({ name: 'user-lambdas', definition, roleArn: ROLE }));
          const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn, input: JSON.stringify({ who: 'ada' }) }));
          for (let i = 0; i < 500; i++) {
            const d = await sfn.send(new DescribeExecutionCommand({ executionArn }));
            if (d.status !== 'RUNNING') {
              outputs.push(d.status, d.output);
              break;
            }
            await new Promise((r) => setTimeout(r, 20));
          }
        } finally {
          sfn.destroy();
        }
      });
      expect(err).toBe('');
      expect(code).toBe(0);
      expect(out).toContain('lambdas: greet, shout\n');
      expect(outputs).toEqual(['SUCCEEDED', '"HELLO ADA"']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a module that cannot load or has no handler, with a named error, before the stack opens', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-lambda-bad-'));
    try {
      writeFileSync(join(dir, 'nohandler.mjs'), 'export const main = () => 1;\n');
      writeFileSync(join(dir, 'broken.mjs'), 'export const handler = ;\n');
      writeFileSync(join(dir, 'typed.ts'), 'export const handler = async () => 1;\n');
      const cases: [string, string, string][] = [
        ['x=nohandler.mjs', 'lambda_handler_missing', "exports no function named 'handler' (it exports main)"],
        ['x=broken.mjs', 'lambda_module_not_loadable', 'broken.mjs failed to load: '],
        ['x=typed.ts', 'lambda_module_not_loadable', 'compile it to JavaScript first'],
        ['x=missing.mjs', 'lambda_module_not_found', `no file ${join(dir, 'missing.mjs')}`],
        ['justamodule.mjs', 'lambda_spec_invalid', '--lambda takes NAME=MODULE'],
        ['ModelStepFunction=nohandler.mjs', 'lambda_name_taken', "one of Stepforge's own step handlers"],
      ];
      for (const [spec, klass, message] of cases) {
        const { code, out, err } = await serve(dir, ['--lambda', spec]);
        expect(code, spec).toBe(1);
        expect(out, spec).toBe('');
        expect(err, spec).toContain(`error[${klass}]`);
        expect(err, spec).toContain(message);
      }
      // Nothing was started: no stack was claimed for the project.
      expect(() => readFileSync(join(dir, '.stepforge', 'stack.json'))).toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
