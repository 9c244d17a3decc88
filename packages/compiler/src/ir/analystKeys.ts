// The key of each analyst of a parallel_analyzer: what its analysis is collected under and the
// header the aggregator reads it under (`## <key>`). GraphN heads each analysis with its agent's
// name, so roles may repeat (two `role: analyst`); an agent listed more than once gets its
// position in the list as well, so no analysis overwrites another.

/** One key per analyst, in list order: the agent's name, or `<agent> (<n>)` (n from 1) when the agent repeats. */
export function analystKeys(analysts: readonly { readonly agent: string }[]): string[] {
  const count = new Map<string, number>();
  for (const a of analysts) count.set(a.agent, (count.get(a.agent) ?? 0) + 1);
  return analysts.map((a, i) => (count.get(a.agent)! > 1 ? `${a.agent} (${i + 1})` : a.agent));
}
