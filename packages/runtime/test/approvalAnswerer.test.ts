// Deciding an approval needs the tool step (it runs the approved call): a handler built without it
// (the trigger's) refuses with ConfigError rather than leaving the task token unanswered.
import { describe, expect, it } from 'vitest';
import { approvalAnswerer } from '../src/steps/approvalAnswerer.js';

describe('Function: approvalAnswerer', () => {
  it('is ConfigError until the tool step has loaded, then the tool step answers', async () => {
    expect(() => approvalAnswerer()).toThrow(
      expect.objectContaining({
        name: 'ConfigError',
        message:
          'this handler was built without the tool step, which answers approvals: approvals are decided by the api and approvals handlers',
      }),
    );
    const { answerApproval } = await import('../src/steps/toolStep.js');
    expect(approvalAnswerer()).toBe(answerApproval);
  });
});
