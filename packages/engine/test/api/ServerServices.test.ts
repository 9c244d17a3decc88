import { CreateStateMachineCommand, SendTaskSuccessCommand, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { CreateQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { CreateTableCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEngineServer, type EngineServer } from '@stepforge/engine';
import { startServiceEmulators, type ServiceEmulators } from '../resources/serviceCases.js';
import { sfnClient, waitForStatus } from './helpers.js';

// An approval flow as the compiler emits it: placeholders filled by `substitutions`, a DynamoDB write,
// then an SQS message carrying the task token that a worker answers through the API.
const DEFINITION = JSON.stringify({
  QueryLanguage: 'JSONata',
  StartAt: 'Record',
  States: {
    Record: {
      Type: 'Task',
      Resource: 'arn:aws:states:::dynamodb:putItem',
      Arguments: { TableName: '${RunsTableName}', Item: { id: { S: '{% $states.input.id %}' }, status: { S: 'waiting' } } },
      Output: '{% $states.input %}',
      Next: 'Approve',
    },
    Approve: {
      Type: 'Task',
      Resource: 'arn:aws:states:::sqs:sendMessage.waitForTaskToken',
      Arguments: {
        QueueUrl: '${ApprovalQueueUrl}',
        MessageBody: { id: '{% $states.input.id %}', token: '{% $states.context.Task.Token %}' },
      },
      TimeoutSeconds: 60,
      End: true,
    },
  },
});

describe('Function: startEngineServer (SQS and DynamoDB resources)', () => {
  let emu: ServiceEmulators;
  let server: EngineServer;
  let queueUrl: string;

  beforeAll(async () => {
    emu = await startServiceEmulators();
    queueUrl = (await emu.sqs.send(new CreateQueueCommand({ QueueName: 'approvals' }))).QueueUrl!;
    await emu.dynamodb.send(
      new CreateTableCommand({
        TableName: 'runs',
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    server = await startEngineServer({
      sqsEndpoint: emu.sqsEndpoint,
      dynamodbEndpoint: emu.dynamodbEndpoint,
      substitutions: { ApprovalQueueUrl: queueUrl, RunsTableName: 'runs' },
    });
  });
  afterAll(async () => {
    await server.close();
    await emu.close();
  });

  it('writes to DynamoDB, sends the token over SQS and completes on SendTaskSuccess', async () => {
    const sfn = sfnClient(server.url);
    try {
      const { stateMachineArn } = await sfn.send(
        new CreateStateMachineCommand({ name: 'approval', definition: DEFINITION, roleArn: 'arn:aws:iam::123456789012:role/r' }),
      );
      const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn, input: '{"id":"run-1"}' }));
      let body: { id: string; token: string } | undefined;
      for (let i = 0; i < 200 && !body; i++) {
        const r = await emu.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0 }));
        if (r.Messages?.[0]) body = JSON.parse(r.Messages[0].Body!) as { id: string; token: string };
        else await new Promise((res) => setTimeout(res, 20));
      }
      expect(body?.id).toBe('run-1');
      const item = await emu.dynamodb.send(new GetItemCommand({ TableName: 'runs', Key: { id: { S: 'run-1' } } }));
      expect(item.Item).toEqual({ id: { S: 'run-1' }, status: { S: 'waiting' } });
      await sfn.send(new SendTaskSuccessCommand({ taskToken: body!.token, output: '{"approved":true}' }));
      const done = await waitForStatus(sfn, executionArn!);
      expect(done.status).toBe('SUCCEEDED');
      expect(JSON.parse(done.output!)).toEqual({ approved: true });
    } finally {
      sfn.destroy();
    }
  });
});
