import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Redactor } from '../secrets/Redactor.js';

/**
 * The persistence layer's handle on the table: a DocumentClient plus the Redactor every write
 * goes through (so no store can persist a secret by accident).
 */
export interface Db {
  readonly client: DynamoDBClient;
  readonly doc: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly redactor: Redactor;
  readonly clock: () => number;
}

/** Builds a Db around a DynamoDB client. */
export function createDb(client: DynamoDBClient, tableName: string, redactor: Redactor, clock: () => number = Date.now): Db {
  const doc = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true },
  });
  return { client, doc, tableName, redactor, clock };
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
