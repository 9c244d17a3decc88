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

/** Throws InvalidArn unless `arn` is a state machine ARN (a version/alias suffix is refused too). */
export function checkStateMachineArn(arn: unknown): string {
  if (typeof arn !== 'string' || arn === '') throw new SfnApiError('ValidationException', "1 validation error detected: Value null at 'stateMachineArn' failed to satisfy constraint: Member must not be null");
  splitStateMachineArn(arn);
  return arn;
}

/** Throws InvalidArn unless `arn` is an execution ARN. */
export function checkExecutionArn(arn: unknown): string {
  if (typeof arn !== 'string' || arn === '') throw new SfnApiError('ValidationException', "1 validation error detected: Value null at 'executionArn' failed to satisfy constraint: Member must not be null");
  if (!EXEC_ARN.test(arn)) throw new SfnApiError('InvalidArn', `Invalid Arn: 'Resource type not valid in this context: ${arn}'`);
  return arn;
}

// Characters AWS refuses in state machine and execution names (plus whitespace and control characters).
const BAD_NAME = /[\s<>{}[\]?*"#%\\^|~`$&,;:/\u0000-\u001f\u007f-\u009f]/u;

/** Throws InvalidName unless `name` is 1–80 characters without the characters AWS forbids. */
export function checkName(name: unknown, what: 'state machine' | 'execution'): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > 80 || BAD_NAME.test(name)) {
    throw new SfnApiError('InvalidName', `Invalid Name: '${String(name)}' (a ${what} name must be 1-80 characters and must not contain whitespace, brackets, wildcards or special characters)`);
  }
  return name;
}
