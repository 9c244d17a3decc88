// Runs the conformance corpus's SQS / DynamoDB / callback cases against real emulators on loopback
// (fauxqs for SQS, dynalite for DynamoDB) through the composed task invoker. Reusable by the
// conformance harness: `startServiceEmulators()` once, then `runServiceCase(case, emulators)`.
import { CreateQueueCommand, DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createRequire } from 'node:module';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createLambdaInvoker,
  createTaskInvoker,
  executeStateMachine,
  TaskTokenRegistry,
  type Clock,
  type ExecutionResult,
  type LambdaHandler,
} from '@stepforge/engine';
// The embedded stack's own way to run fauxqs (on loopback only; fauxqs's startFauxqs binds 0.0.0.0).
import { startSqsEmulator } from '../../../embedded/src/startSqsEmulator.js';

// dynalite ships no types; it is a CommonJS factory returning an http.Server.
const dynalite = createRequire(import.meta.url)('dynalite') as (options: Record<string, unknown>) => Server;

const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/** Local SQS and DynamoDB servers plus clients for setting up resources. */
export interface ServiceEmulators {
  readonly sqsEndpoint: string;
  readonly dynamodbEndpoint: string;
  readonly sqs: SQSClient;
  readonly dynamodb: DynamoDBClient;
  close(): Promise<void>;
}

/** Starts fauxqs and dynalite on 127.0.0.1 with free ports. */
export async function startServiceEmulators(): Promise<ServiceEmulators> {
  const fq = await startSqsEmulator('127.0.0.1');
  const dyn = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve) => dyn.listen(0, '127.0.0.1', () => resolve()));
  const dynamodbEndpoint = `http://127.0.0.1:${(dyn.address() as AddressInfo).port}`;
  const sqsEndpoint = fq.endpoint;
  const sqs = new SQSClient({ endpoint: sqsEndpoint, region: 'us-east-1', credentials: CREDENTIALS });
  const dynamodb = new DynamoDBClient({ endpoint: dynamodbEndpoint, region: 'us-east-1', credentials: CREDENTIALS });
  return {
    sqsEndpoint,
    dynamodbEndpoint,
    sqs,
    dynamodb,
    async close() {
      sqs.destroy();
      dynamodb.destroy();
      await fq.stop();
      await new Promise<void>((resolve) => dyn.close(() => resolve()));
    },
  };
}

/** The fields of a corpus case this runner reads. */
export interface ServiceCase {
  file: string;
  definition: Record<string, unknown>;
  input: unknown;
  lambdas: Record<string, string>;
  resources: { kind: string; value: string; partitionKey?: string }[];
  naming: { stateMachineName: string | null; stateMachineArn: string | null; executionArn: string | null; roleArn: string };
  stateMachineType: 'STANDARD' | 'EXPRESS';
}

/** A clock running `factor` times faster than real time (task timeouts of minutes take ms, but I/O still happens). */
export function fastClock(factor = 100): Clock {
  const real0 = Date.now();
  const virt0 = Date.UTC(2024, 0, 1);
  return {
    now: () => virt0 + (Date.now() - real0) * factor,
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        if (signal?.aborted) return resolve();
        const t = setTimeout(done, Math.max(0, ms / factor));
        function done() {
          clearTimeout(t);
          signal?.removeEventListener('abort', done);
          resolve();
        }
        signal?.addEventListener('abort', done, { once: true });
      }),
  };
}

let counter = 0;

/**
 * Runs one services case: creates its queues/tables under fresh names, swaps the placeholders in
 * the input for them, plays the test's callback worker, and maps the real names back to the
 * placeholders in the result so it compares with the recording.
 */
export async function runServiceCase(
  c: ServiceCase,
  emu: ServiceEmulators,
  lambdas: Record<string, LambdaHandler> = {},
): Promise<ExecutionResult> {
  const n = ++counter;
  const swaps: [placeholder: string, real: string][] = [];
  const queues: string[] = [];
  for (const r of c.resources) {
    if (r.kind === 'sqs_queue') {
      const { QueueUrl } = await emu.sqs.send(new CreateQueueCommand({ QueueName: `case-${n}-${queues.length}` }));
      swaps.push([r.value, QueueUrl!]);
      queues.push(QueueUrl!);
    } else if (r.kind === 'dynamodb_table') {
      const name = `test_table_${n}`;
      const pk = r.partitionKey ?? 'id';
      await emu.dynamodb.send(
        new CreateTableCommand({
          TableName: name,
          AttributeDefinitions: [{ AttributeName: pk, AttributeType: 'S' }],
          KeySchema: [{ AttributeName: pk, KeyType: 'HASH' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
      swaps.push([r.value, name]);
    }
  }
  // A table placeholder without a created table names a table that does not exist.
  if (!swaps.some(([p]) => p === '<test-table>')) swaps.push(['<test-table>', `test_table_missing_${n}`]);
  const swap = (text: string, from: 0 | 1) => swaps.reduce((t, s) => t.split(s[from]).join(s[from === 0 ? 1 : 0]), text);
  const input = JSON.parse(swap(JSON.stringify(c.input), 0)) as unknown;

  const tokens = new TaskTokenRegistry();
  const invoker = createTaskInvoker({
    tokens,
    lambda: createLambdaInvoker(lambdas, { partition: '<partition>', region: '<region>', account: '111111111111', runtime: 'python' }),
    sqs: { endpoint: emu.sqsEndpoint, region: 'us-east-1', credentials: CREDENTIALS },
    dynamodb: { endpoint: emu.dynamodbEndpoint, region: 'us-east-1', credentials: CREDENTIALS },
  });
  const stopWorker = startCallbackWorker(c.file, emu.sqs, queues[0], tokens);
  const smName = c.naming.stateMachineName ?? '<ArnPart_0idx>';
  const smArn = c.naming.stateMachineArn ?? `arn:<partition>:states:<region>:111111111111:stateMachine:${smName}`;
  const execArn = c.naming.executionArn ?? `${smArn.replace(':stateMachine:', ':execution:')}:<ExecArnPart_0idx>`;
  try {
    const result = await executeStateMachine(c.definition, input, {
      invoker,
      // 5× real time: the 5 s task timeout case takes 1 s, long enough that a slow SQS round trip on a
      // loaded machine still lands before it (the recording has TaskSubmitted before the timeout).
      clock: fastClock(5),
      partition: '<partition>',
      region: '<region>',
      account: '111111111111',
      stateMachineName: smName,
      stateMachineArn: smArn,
      executionArn: execArn,
      executionName: execArn.split(':').pop()!,
      // The SQS tests' recorder masked the role ARN's last segment (`role/<resource:1>`), so it was an ARN there.
      roleArn: c.resources.some((r) => r.kind === 'sqs_queue')
        ? `arn:<partition>:iam::111111111111:role/${c.naming.roleArn}`
        : c.naming.roleArn,
      stateMachineType: c.stateMachineType,
    });
    return JSON.parse(swap(JSON.stringify(result), 1)) as ExecutionResult;
  } finally {
    stopWorker();
    invoker.close();
  }
}

/** The callback worker each recorded test ran (see the cases' `callbackWorker` notes). */
function startCallbackWorker(file: string, sqs: SQSClient, queueUrl: string | undefined, tokens: TaskTokenRegistry): () => void {
  const name = file.split('/').pop()!;
  type Behaviour = (body: string, parsed: { TaskToken?: string; Message?: unknown }) => void;
  let behaviour: Behaviour | undefined;
  let once = false;
  if (name.startsWith('test_callback__test_multiple_heartbeat_notifications')) {
    once = true;
    behaviour = (body, m) => {
      for (let i = 0; i < 10; i++) tokens.heartbeat(m.TaskToken!);
      tokens.succeed(m.TaskToken!, body);
    };
  } else if (name.startsWith('test_callback__test_sqs_failure_in_wait_for_task_tok_no_error_field')) {
    once = true;
    behaviour = (_b, m) => tokens.fail(m.TaskToken!);
  } else if (name.startsWith('test_callback__test_sqs_wait_for_task_token_call_chain')) {
    behaviour = (_b, m) => tokens.succeed(m.TaskToken!, JSON.stringify(m.Message));
  } else if (name.startsWith('test_task_service_sqs__test_sqs_failure_in_wait_for_task_tok')) {
    behaviour = (_b, m) => tokens.fail(m.TaskToken!, 'Failure error', 'Failure cause');
  }
  if (!behaviour || !queueUrl) return () => undefined;
  let stopped = false;
  void (async () => {
    while (!stopped) {
      const r = await sqs
        .send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }))
        .catch(() => ({ Messages: [] }));
      for (const msg of r.Messages ?? []) {
        await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: msg.ReceiptHandle! })).catch(() => undefined);
        try {
          behaviour(msg.Body!, JSON.parse(msg.Body!) as { TaskToken?: string });
        } catch {
          // A message without a token (or a token already closed) is ignored, as the recorded workers did.
        }
        if (once) stopped = true;
      }
      await new Promise((res) => setTimeout(res, 10));
    }
  })();
  return () => {
    stopped = true;
  };
}
