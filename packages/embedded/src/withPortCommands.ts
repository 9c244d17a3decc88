import * as dynamodb from '@aws-sdk/client-dynamodb';
import { DynamoDBServiceException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { PortAnswer, WorkerPortHttpHandler } from './WorkerPortHttpHandler.js';

/**
 * The item operations that go over the port as JSON (`withPortCommands`): those whose answers hold
 * nothing but JSON the SDK would hand over as it is, and AttributeValues (binary ones decoded).
 * The table operations (CreateTable, DescribeTable, TTL) answer with dates, which the SDK turns
 * into Date objects: they keep the SDK's own path.
 */
const ITEM_OPERATIONS = new Set([
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'BatchGetItem',
  'BatchWriteItem',
  'TransactGetItems',
  'TransactWriteItems',
]);

/**
 * Sends a client's item operations to the dynalite worker as the JSON dynalite reads, built with
 * JSON.stringify, and reads its answer with JSON.parse, in place of the SDK's serializer,
 * endpoint resolution, SigV4 signing, HTTP request and deserializer: on the embedded stack's
 * owner, for the client that writes every step's records (`Db.commands`), whose commands carry
 * AttributeValues already (the DocumentClient, whose marshalling runs inside the SDK's
 * serializer step, cannot use this and keeps the SDK's path). The worker hands the body to
 * dynalite's own request handler, so the validation, the conditional writes and the error answers
 * are dynalite's, as over HTTP. What the caller gets is what the SDK would give it: the output with
 * `$metadata`, binary values as bytes, and an error of the client's exception class by name (the
 * generic DynamoDBServiceException for one the client does not model), with the answer's fields.
 * The SDK's retries are not in this path: dynalite never throttles, and a port that is gone fails
 * every attempt alike (ECONNRESET).
 */
export function withPortCommands(client: DynamoDBClient, port: WorkerPortHttpHandler): DynamoDBClient {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName;
      const op = name?.endsWith('Command') ? name.slice(0, -'Command'.length) : undefined;
      if (op === undefined || !ITEM_OPERATIONS.has(op)) return next(args);
      const answer = await port.call(`DynamoDB_20120810.${op}`, JSON.stringify(args.input, bytesAsBase64));
      return { output: outputOf(answer) as dynamodb.ServiceOutputTypes, response: undefined };
    },
    // Last of the initialize step: everything before the serializer, with the input as sent.
    { step: 'initialize', priority: 'low', name: 'stepforgePortCommands' },
  );
  return client;
}

/** The SDK's output for an answer, or the error it would throw. */
function outputOf(answer: PortAnswer): object {
  const $metadata = {
    httpStatusCode: answer.statusCode,
    requestId: answer.headers['x-amzn-requestid'],
    attempts: 1,
    totalRetryDelay: 0,
  };
  const parsed: unknown = answer.body === '' ? {} : JSON.parse(answer.body);
  // dynalite writes JSON without spaces: a binary AttributeValue shows as `"B":` or `"BS":`.
  const body = (answer.body.includes('"B":') || answer.body.includes('"BS":') ? withBytes(parsed) : parsed) as Record<string, unknown>;
  if (answer.statusCode === 200) return { ...body, $metadata };
  throw serviceError(body, answer.statusCode, $metadata);
}

/** An error answer as the SDK throws it (its awsJson1_0 protocol's rules for the name and message). */
function serviceError(body: Record<string, unknown>, statusCode: number, $metadata: object): Error {
  const { __type, message, Message, ...fields } = body;
  const code = String(__type ?? 'UnknownError')
    .split('#')
    .at(-1)!
    .split(':')[0]!;
  const text = String(message ?? Message ?? 'UnknownError');
  const modelled = (dynamodb as unknown as Record<string, unknown>)[code];
  if (typeof modelled === 'function' && modelled.prototype instanceof DynamoDBServiceException) {
    const Ctor = modelled as new (o: object) => Error;
    return Object.assign(new Ctor({ message: text, $metadata, ...fields }), fields);
  }
  return Object.assign(
    new DynamoDBServiceException({ name: code, $fault: statusCode >= 500 ? 'server' : 'client', $metadata, message: text }),
    fields,
  );
}

/** JSON.stringify's replacer: bytes (a `B` value, or each of `BS`) as base64, as the SDK sends them. */
function bytesAsBase64(this: Record<string, unknown>, key: string, value: unknown): unknown {
  // `value` is what toJSON made of it (a Buffer's is {type, data}); the holder has the original.
  const raw = this[key];
  return raw instanceof Uint8Array ? Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64') : value;
}

/**
 * An answer with its binary AttributeValues (`{"B": base64}`, `{"BS": [base64]}`) as bytes, as the
 * SDK's deserializer gives them. In an answer's JSON a key `B` or `BS` with a string (or strings)
 * is an AttributeValue: a map's values are AttributeValues (objects), never strings.
 */
function withBytes(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = withBytes(v[i]);
    return v;
  }
  const o = v as Record<string, unknown>;
  if (typeof o.B === 'string') return { ...o, B: new Uint8Array(Buffer.from(o.B, 'base64')) };
  if (Array.isArray(o.BS) && o.BS.every((x) => typeof x === 'string'))
    return { ...o, BS: o.BS.map((x: string) => new Uint8Array(Buffer.from(x, 'base64'))) };
  for (const k in o) o[k] = withBytes(o[k]);
  return o;
}
