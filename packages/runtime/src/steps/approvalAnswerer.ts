import type { StepEnvelope } from '@stepforge/contract';
import { RuntimeError } from '../errors/RuntimeError.js';
import type { ApprovalRecord } from '../persistence/ApprovalStore.js';
import type { Runtime } from '../runtime/Runtime.js';

/** Answers a decided approval's task token (toolStep's answerApproval: an approved call is run there). */
export type AnswerApproval = (rt: Runtime, rec: ApprovalRecord, env?: StepEnvelope) => Promise<{ delivered: boolean; result?: unknown }>;

let answerer: AnswerApproval | undefined;

/**
 * Given by `toolStep.ts` when it loads. Deciding an approval runs the call it gated, with every
 * tool and MCP server the tool step can reach, so only the code that decides approvals (the tool,
 * api and approvals handlers, the embedded stack) imports the tool step, and a Lambda that never
 * decides one (the trigger) carries neither the tools nor the MCP SDK.
 */
export function provideApprovalAnswerer(answer: AnswerApproval): void {
  answerer = answer;
}

/** The approval answerer; ConfigError in a handler built without the tool step. */
export function approvalAnswerer(): AnswerApproval {
  if (!answerer)
    throw new RuntimeError(
      'ConfigError',
      'this handler was built without the tool step, which answers approvals: approvals are decided by the api and approvals handlers',
    );
  return answerer;
}
