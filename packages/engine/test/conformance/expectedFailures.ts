// Reviewed list of corpus cases that do not fully pass, each with the reason. The conformance
// test fails when one of these starts passing (remove it then) and when any other case fails.

/** What does not match: the end result, or only the normalised history. */
export type FailureKind = 'end' | 'history';

/** file (category/name.json) → kind and reason. */
export const EXPECTED_FAILURES: Record<string, { kind: FailureKind; reason: string }> = {
  'scenarios/test_base_scenarios__test_lambda_invoke_with_retry_extended_input.json': {
    kind: 'history',
    reason:
      'Recorded before AWS added Execution.RedriveCount to the context object (82 later recordings list $..RedriveCount in snapshotSkipVerifyPaths); we follow current AWS and include it. End result matches.',
  },
  'scenarios/test_base_scenarios__test_lambda_service_invoke_with_retry_extended_input.json': {
    kind: 'history',
    reason: 'Same as the Lambda-ARN variant: the recording predates Execution.RedriveCount in $$; end result matches.',
  },
  'scenarios/test_base_scenarios__test_parallel_state_nested.json': {
    kind: 'history',
    reason:
      "The recorder's Parallel-sorting transformer mangled this nested-Parallel history: it kept the inner ParallelStateStarted unsorted and dropped the inner ParallelStateSucceeded, the inner ParallelStateExited and the outer ParallelStateSucceeded (events 8-10). Emulating that transformer for one case is not worth it; our events are the complete AWS sequence and the end result matches.",
  },
};
