import { describe, it, expect } from 'vitest';
import { executeStateMachine } from '@stepforge/engine';

describe('Function: executeStateMachine', () => {
  it('reads $states.context inside any JSONata expression, not only a plain path', async () => {
    const result = await executeStateMachine(
      {
        QueryLanguage: 'JSONata',
        StartAt: 'P',
        States: {
          P: {
            Type: 'Pass',
            Output: {
              plain: '{% $states.context.Execution.Name %}',
              concatenated: '{% "name:" & $states.context.Execution.Name %}',
              state: '{% $uppercase($states.context.State.Name) %}',
            },
            End: true,
          },
        },
      },
      {},
      { executionName: 'exec-7' },
    );
    expect(result.status).toBe('SUCCEEDED');
    expect(result.output).toEqual({ plain: 'exec-7', concatenated: 'name:exec-7', state: 'P' });
  });
});
