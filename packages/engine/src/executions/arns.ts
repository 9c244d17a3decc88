import { SfnApiError } from './SfnApiError.js';

/** Partition, region and account that ARNs are built from. */
export interface ArnScope {
  readonly partition: string;
  readonly region: string;
  readonly account: string;
}

/** `arn:<partition>:states:<region>:<account>:stateMachine:<name>`. */
export function stateMachineArn(s: ArnScope, name: string): string {
  return `arn:${s.partition}:states:${s.region}:${s.account}:stateMachine:${name}`;
}

/** `arn:…:execution:<state machine>:<execution>` (Standard) or `arn:…:express:<sm>:<exec>:<id>` (Express). */
export function executionArn(smArn: string, name: string, express?: { id: string }): string {
  const [prefix, smName] = splitStateMachineArn(smArn);
  return express ? `${prefix}:express:${smName}:${name}:${express.id}` : `${prefix}:execution:${smName}:${name}`;
}

const SM_ARN = /^(arn:[^:]+:states:[^:]*:[^:]*):stateMachine:([^:]+)$/;
const EXEC_ARN = /^arn:[^:]+:states:[^:]*:[^:]*:(execution|express):[^:]+:[^:]+(:[^:]+)?$/;

function splitStateMachineArn(arn: string): [string, string] {
  const m = SM_ARN.exec(arn);
  if (!m) throw new SfnApiError('InvalidArn', `Invalid Arn: 'Resource type not valid in this context: ${arn}'`);
  return [m[1]!, m[2]!];
}

/** A state machine ARN taken apart: the unqualified ARN, and the version number or alias name after it. */
export interface StateMachineArnParts {
  /** `arn:…:stateMachine:<name>`, without a qualifier. */
  readonly stateMachineArn: string;
  readonly name: string;
  /** `arn:…:stateMachine:<name>:<version>`. */
  readonly version?: number;
  /** `arn:…:stateMachine:<name>:<alias>`. */
  readonly alias?: string;
}

const QUALIFIED_SM_ARN = /^(arn:[^:]+:states:[^:]*:[^:]*:stateMachine:([^:]+)):([^:]+)$/;

/**
 * Parses a state machine ARN that may carry a version (`:1`) or an alias (`:prod`) qualifier: a
 * qualifier of digits alone is a version, as Step Functions numbers versions and forbids alias
 * names made of digits only. Throws InvalidArn for anything else.
 */
export function parseStateMachineArn(arn: unknown, field = 'stateMachineArn'): StateMachineArnParts {
  if (typeof arn !== 'string' || arn === '')
    throw new SfnApiError(
      'ValidationException',
      `1 validation error detected: Value null at '${field}' failed to satisfy constraint: Member must not be null`,
    );
  const plain = SM_ARN.exec(arn);
  if (plain) return { stateMachineArn: arn, name: plain[2]! };
  const q = QUALIFIED_SM_ARN.exec(arn);
  if (!q) throw new SfnApiError('InvalidArn', `Invalid Arn: 'Resource type not valid in this context: ${arn}'`);
  const qualifier = q[3]!;
  if (/^\d+$/.test(qualifier)) return { stateMachineArn: q[1]!, name: q[2]!, version: Number(qualifier) };
  return { stateMachineArn: q[1]!, name: q[2]!, alias: qualifier };
}

/** Throws InvalidArn unless `arn` is a state machine ARN (a version/alias suffix is refused too). */
export function checkStateMachineArn(arn: unknown): string {
  if (typeof arn !== 'string' || arn === '')
    throw new SfnApiError(
      'ValidationException',
      "1 validation error detected: Value null at 'stateMachineArn' failed to satisfy constraint: Member must not be null",
    );
  splitStateMachineArn(arn);
  return arn;
}

/** Throws InvalidArn unless `arn` is an execution ARN. */
export function checkExecutionArn(arn: unknown): string {
  if (typeof arn !== 'string' || arn === '')
    throw new SfnApiError(
      'ValidationException',
      "1 validation error detected: Value null at 'executionArn' failed to satisfy constraint: Member must not be null",
    );
  if (!EXEC_ARN.test(arn)) throw new SfnApiError('InvalidArn', `Invalid Arn: 'Resource type not valid in this context: ${arn}'`);
  return arn;
}

const MAP_RUN_ARN = /^arn:[^:]+:states:[^:]*:[^:]*:mapRun:[^:/]+\/[^:]+:[^:]+$/;

/** Throws InvalidArn unless `arn` is a Map Run ARN (`arn:…:mapRun:<state machine>/<label>:<id>`). */
export function checkMapRunArn(arn: unknown, field = 'mapRunArn'): string {
  if (typeof arn !== 'string' || arn === '')
    throw new SfnApiError(
      'ValidationException',
      `1 validation error detected: Value null at '${field}' failed to satisfy constraint: Member must not be null`,
    );
  if (!MAP_RUN_ARN.test(arn))
    throw new SfnApiError(
      'InvalidArn',
      `Invalid Arn: 'Resource type not valid in this context: ${arn}' (a Map Run ARN is arn:…:mapRun:<state machine>/<label>:<id>, as ListMapRuns lists them)`,
    );
  return arn;
}

// Characters AWS refuses in state machine and execution names (plus whitespace and control characters).
const BAD_NAME = /[\s<>{}[\]?*"#%\\^|~`$&,;:/\u0000-\u001f\u007f-\u009f]/u;

// Alias names: letters, digits, `-` and `_`, and not digits alone (those name versions).
const ALIAS_NAME = /^(?=.*[A-Za-z_-])[A-Za-z0-9_-]{1,80}$/;

/** Throws InvalidName unless `name` is a valid alias name. */
export function checkAliasName(name: unknown): string {
  if (typeof name !== 'string' || !ALIAS_NAME.test(name)) {
    throw new SfnApiError(
      'InvalidName',
      `Invalid Name: '${String(name)}' (an alias name must be 1-80 letters, digits, '-' or '_', and not digits alone, which name versions)`,
    );
  }
  return name;
}

/** Throws InvalidName unless `name` is 1–80 characters without the characters AWS forbids. */
export function checkName(name: unknown, what: 'state machine' | 'execution'): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > 80 || BAD_NAME.test(name)) {
    throw new SfnApiError(
      'InvalidName',
      `Invalid Name: '${String(name)}' (a ${what} name must be 1-80 characters and must not contain whitespace, brackets, wildcards or special characters)`,
    );
  }
  return name;
}
