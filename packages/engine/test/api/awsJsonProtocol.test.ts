import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEngineServer, type EngineServer } from '@stepforge/engine';

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
    const res = await call('AWSStepFunctions.CreateStateMachine', JSON.stringify({ name: 'p', definition: '{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}' }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-amz-json-1.0');
    const body = (await res.json()) as { stateMachineArn: string; creationDate: number };
    expect(body.stateMachineArn).toBe('arn:aws:states:us-east-1:123456789012:stateMachine:p');
    expect(Math.abs(body.creationDate - Date.now() / 1000)).toBeLessThan(60);
  });

  it('sends AWS-shaped errors with __type, message and x-amzn-ErrorType', async () => {
    const res = await call('AWSStepFunctions.DescribeStateMachine', JSON.stringify({ stateMachineArn: 'arn:aws:states:us-east-1:123456789012:stateMachine:none' }));
    expect(res.status).toBe(400);
    expect(res.headers.get('x-amzn-errortype')).toBe('StateMachineDoesNotExist');
    expect(await res.json()).toEqual({
      __type: 'StateMachineDoesNotExist',
      message: "State Machine Does Not Exist: 'arn:aws:states:us-east-1:123456789012:stateMachine:none'",
    });
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
