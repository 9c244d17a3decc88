import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { isLoopbackHostname, localRequestRefusal, startEngineServer, type EngineServer } from '@stepforge/engine';

describe('Function: startEngineServer (AWS JSON 1.0 protocol)', () => {
  let server: EngineServer;
  beforeAll(async () => {
    server = await startEngineServer({});
  });
  afterAll(async () => server.close());

  const call = (target: string | undefined, body: string) =>
    fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.0', ...(target ? { 'x-amz-target': target } : {}) },
      body,
    });

  it('answers with application/x-amz-json-1.0 and epoch-second dates', async () => {
    const res = await call(
      'AWSStepFunctions.CreateStateMachine',
      JSON.stringify({ name: 'p', definition: '{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}' }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-amz-json-1.0');
    const body = (await res.json()) as { stateMachineArn: string; creationDate: number };
    expect(body.stateMachineArn).toBe('arn:aws:states:us-east-1:123456789012:stateMachine:p');
    expect(Math.abs(body.creationDate - Date.now() / 1000)).toBeLessThan(60);
  });

  it('sends AWS-shaped errors with __type, message and x-amzn-ErrorType', async () => {
    const res = await call(
      'AWSStepFunctions.DescribeStateMachine',
      JSON.stringify({ stateMachineArn: 'arn:aws:states:us-east-1:123456789012:stateMachine:none' }),
    );
    expect(res.status).toBe(400);
    expect(res.headers.get('x-amzn-errortype')).toBe('StateMachineDoesNotExist');
    expect(await res.json()).toEqual({
      __type: 'StateMachineDoesNotExist',
      message: "State Machine Does Not Exist: 'arn:aws:states:us-east-1:123456789012:stateMachine:none'",
    });
  });

  it('refuses requests that web pages of other sites send (another Host, a foreign Origin) with AccessDeniedException', async () => {
    const { port } = new URL(server.url);
    const raw = (headers: Record<string, string>) =>
      new Promise<{ status: number; type: unknown; body: string }>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AWSStepFunctions.ListStateMachines', ...headers },
          },
          (res) => {
            let body = '';
            res
              .setEncoding('utf8')
              .on('data', (c: string) => (body += c))
              .on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['x-amzn-errortype'], body }));
          },
        );
        req.on('error', reject).end('{}');
      });
    const rebound = await raw({ host: `sfn.attacker.example:${port}` });
    expect([rebound.status, rebound.type, JSON.parse(rebound.body).__type]).toEqual([
      403,
      'AccessDeniedException',
      'AccessDeniedException',
    ]);
    expect((await raw({ host: `127.0.0.1:${port}`, origin: 'https://attacker.example' })).status).toBe(403);
    expect((await raw({ host: `localhost:${port}` })).status).toBe(200);
  });

  it('refuses unknown operations, missing targets and bodies that are not JSON objects', async () => {
    expect(await (await call('AWSStepFunctions.GetActivityTask', '{}')).json()).toMatchObject({ __type: 'UnknownOperationException' });
    expect(await (await call(undefined, '{}')).json()).toMatchObject({ __type: 'UnknownOperationException' });
    const bad = await call('AWSStepFunctions.ListStateMachines', '{oops');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ __type: 'SerializationException', message: 'The request body is not valid JSON' });
    expect(await (await call('AWSStepFunctions.ListStateMachines', '[1]')).json()).toMatchObject({ __type: 'SerializationException' });
  });
});

describe('Function: localRequestRefusal', () => {
  it('passes loopback names and pages, and no Host at all', () => {
    for (const host of [
      '127.0.0.1:8787',
      'localhost',
      'LOCALHOST:1',
      'app.localhost:3000',
      '127.1.2.3',
      '[::1]:8787',
      '[::1]',
      'localhost.',
    ]) {
      expect([host, localRequestRefusal({ host })]).toEqual([host, undefined]);
    }
    expect(localRequestRefusal({})).toBeUndefined();
    expect(localRequestRefusal({ host: 'localhost:8787', origin: 'http://127.0.0.1:5173' })).toBeUndefined();
    expect(localRequestRefusal({ host: 'localhost:8787', origin: 'https://localhost' })).toBeUndefined();
  });

  it('names a foreign Host (host_not_allowed) and a foreign, null or odd Origin (origin_not_allowed)', () => {
    for (const host of ['evil.example:8787', '127.0.0.1.nip.io', 'localhost.evil.example', '192.168.1.2:8787', '[::2]:1', '0.0.0.0:8787']) {
      expect([host, localRequestRefusal({ host })?.code]).toEqual([host, 'host_not_allowed']);
    }
    for (const origin of ['https://evil.example', 'null', 'file://', 'chrome-extension://abc', 'http://localhost.evil.example']) {
      expect([origin, localRequestRefusal({ host: '127.0.0.1:8787', origin })?.code]).toEqual([origin, 'origin_not_allowed']);
    }
    expect(localRequestRefusal({ host: '127.0.0.1', origin: 'https://evil.example' })?.message).toBe(
      "requests from web pages of 'https://evil.example' are refused: only pages served from 127.0.0.1, localhost or [::1] may call this server (a cross-site page could otherwise start runs or decide approvals)",
    );
    expect(isLoopbackHostname('[::1]')).toBe(true);
  });
});
