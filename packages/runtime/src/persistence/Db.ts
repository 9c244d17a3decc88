import { DynamoDBClient, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Redactor } from '../secrets/Redactor.js';

/**
 * The persistence layer's handle on the table: a DocumentClient plus the Redactor every write
 * goes through (so no store can persist a secret by accident).
 */
export interface Db {
  readonly client: DynamoDBClient;
  /**
   * The same table through a client whose middleware stack is resolved once per command class
   * (`cacheMiddleware`), for the writes every step makes, with values marshalled by marshallItem.
   * The DocumentClient cannot share that setting (it refuses a client that has it).
   */
  readonly commands: DynamoDBClient;
  readonly doc: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly redactor: Redactor;
  readonly clock: () => number;
}

/** Builds a Db around a DynamoDB client (and the client for `commands`, by default the same one). */
export function createDb(
  client: DynamoDBClient,
  tableName: string,
  redactor: Redactor,
  clock: () => number = Date.now,
  commands: DynamoDBClient = client,
): Db {
  const doc = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true },
  });
  return { client, commands, doc, tableName, redactor, clock };
}

/**
 * The longest id a run or approval can have: run ids are Step Functions execution names (at most
 * 80 characters) and approval ids UUIDs. A lookup of a longer one finds nothing, rather than
 * sending DynamoDB a key over its 2048-byte limit (a ValidationException the user caused).
 */
export const MAX_RECORD_ID_LENGTH = 256;

/** Whether `id` could name a stored run or approval at all (see MAX_RECORD_ID_LENGTH). */
export function couldBeRecordId(id: string): boolean {
  return id.length > 0 && id.length <= MAX_RECORD_ID_LENGTH;
}

/**
 * Converts plain JS to a raw AttributeValue map, as the DocumentClient here does
 * (`removeUndefinedValues`, objects of any class as maps): the inverse of unmarshallItem.
 */
export function marshallItem(item: Record<string, unknown>): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const [k, v] of Object.entries(item)) {
    const av = marshallValue(v);
    if (av !== undefined) out[k] = av;
  }
  return out;
}

function marshallValue(v: unknown): AttributeValue | undefined {
  if (v === undefined || typeof v === 'function' || typeof v === 'symbol') return undefined;
  if (v === null) return { NULL: true };
  if (typeof v === 'string') return { S: v };
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`cannot store the number ${v} in DynamoDB`);
    return { N: String(v) };
  }
  if (typeof v === 'bigint') return { N: v.toString() };
  if (typeof v === 'boolean') return { BOOL: v };
  if (Array.isArray(v)) return { L: v.map(marshallValue).filter((x): x is AttributeValue => x !== undefined) };
  if (v instanceof Uint8Array) return { B: v };
  if (v instanceof Set) {
    const xs = [...v];
    return xs.every((x) => typeof x === 'number') ? { NS: xs.map(String) } : { SS: xs.map(String) };
  }
  return { M: marshallItem(v as Record<string, unknown>) };
}

/** The old item a failed conditional write returned, when the service supports ReturnValuesOnConditionCheckFailure. */
export function conditionFailureItem(e: unknown): Record<string, unknown> | undefined {
  if ((e as { name?: string }).name !== 'ConditionalCheckFailedException') return undefined;
  return (e as { Item?: Record<string, unknown> }).Item;
}

/** True for a failed condition expression. */
export function isConditionFailure(e: unknown): boolean {
  return (e as { name?: string }).name === 'ConditionalCheckFailedException';
}

/** Converts a raw AttributeValue map (as carried by a ConditionalCheckFailedException) to plain JS. */
export function unmarshallItem(item: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(item)) out[k] = unmarshallValue(v);
  return out;
}

function unmarshallValue(v: unknown): unknown {
  const av = v as Record<string, unknown>;
  if ('S' in av) return av.S;
  if ('N' in av) return Number(av.N);
  if ('BOOL' in av) return av.BOOL;
  if ('NULL' in av) return null;
  if ('M' in av) return unmarshallItem(av.M as Record<string, unknown>);
  if ('L' in av) return (av.L as unknown[]).map(unmarshallValue);
  if ('SS' in av) return new Set(av.SS as string[]);
  if ('NS' in av) return new Set((av.NS as string[]).map(Number));
  if ('B' in av) return av.B;
  return undefined;
}
