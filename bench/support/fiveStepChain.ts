/** Steps in the run benchmark's chain. */
export const FIVE_STEPS = 5;

/**
 * The run benchmark's workflow: a 5-step chain (`s1@web-search > s2 > … > s5`; the tier policy wants
 * one agentic step; on the deterministic provider, which calls no tools, every step is one model call).
 */
export const FIVE_STEP_CHAIN = `name: bench-five
chain: "s1@web-search > s2 > s3 > s4 > s5"
input:
  topic: string
tasks:
${Array.from({ length: FIVE_STEPS }, (_, i) => `  s${i + 1}: { kind: model, prompt: "Step ${i + 1} on \${input.topic}" }`).join('\n')}
`;
