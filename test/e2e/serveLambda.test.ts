// `stepforge serve --lambda NAME=MODULE` as a user runs it: the built binary (whose bundle loads the
// module through its launcher), a state machine created on its Step Functions endpoint calling the
// module's handler, and the named error for a module without one.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CreateStateMachineCommand, SFNClient, StartSyncExecutionCommand } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { STEPFORGE_BIN, spawnStepforge, tempProject } from './support/testIo.js';

const ENV = { ...process.env, STEPFORGE_LOG_LEVEL: 'SILENT' };

describe('Command: serve --lambda (built binary)', () => {
  it('refuses a module without a handler with error[lambda_handler_missing], exit 1', async () => {
    const project = tempProject('sf-serve-lambda-bad-');
    try {
      writeFileSync(join(project.dir, 'nohandler.mjs'), 'export const main = () => 1;\n');
      const r = await spawnStepforge(project.dir, ENV, ['serve', '--lambda', 'f=nohandler.mjs']);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `error[lambda_handler_missing] --lambda f=nohandler.mjs: ${join(project.dir, 'nohandler.mjs')} exports no function named 'handler' (it exports main); export \`handler(event, context)\` as a Node.js Lambda does\n`,
      );
    } finally {
      project.remove();
    }
  });

  it("serves the module's handler to state machines on its Step Functions endpoint", async () => {
    const project = tempProject('sf-serve-lambda-');
    writeFileSync(join(project.dir, 'double.mjs'), 'export async function handler(event) { return { n: event.n * 2 }; }\n');
    const child = spawn(process.execPath, [STEPFORGE_BIN, 'serve', '--port', '0', '--lambda', 'double=double.mjs'], {
      cwd: project.dir,
      env: ENV,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    try {
      for (let i = 0; i < 600 && !out.includes('lambdas: '); i++) await new Promise((r) => setTimeout(r, 100));
      expect(out, err).toContain('lambdas: double\n');
      const endpoint = /Step Functions API (\S+)/.exec(out)![1]!;
      const { credentials } = JSON.parse(readFileSync(join(project.dir, '.stepforge', 'stack.json'), 'utf8')) as {
        credentials: { accessKeyId: string; secretAccessKey: string };
      };
      const sfn = new SFNClient({ endpoint, region: 'us-east-1', credentials, disableHostPrefix: true, maxAttempts: 1 });
      try {
        const definition = JSON.stringify({
          StartAt: 'Double',
          States: { Double: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:double', End: true } },
        });
        const { stateMachineArn } = await sfn.send(
          new CreateStateMachineCommand({ name: 'doubler', type: 'EXPRESS', definition, roleArn: 'arn:aws:iam::123456789012:role/test' }),
        );
        const done = await sfn.send(new StartSyncExecutionCommand({ stateMachineArn, input: '{"n":21}' }));
        expect(done).toMatchObject({ status: 'SUCCEEDED', output: '{"n":42}' });
      } finally {
        sfn.destroy();
      }
    } finally {
      const ended = new Promise((r) => child.once('exit', r));
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await ended;
      clearTimeout(timer);
      project.remove();
    }
  }, 120_000);
});
