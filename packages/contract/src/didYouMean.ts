/** Edit distance counting insertions, deletions, substitutions and adjacent transpositions (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row[j] = j;
        continue;
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      // A swapped pair (`modle` for `model`) is one typo, not two.
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      row[j] = d;
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}

/** Names this long or longer suggest a candidate they begin (an unfinished `dra` → `draft`). */
const MIN_PREFIX = 3;

/**
 * The closest candidate to `name`: a case-insensitive match first, then the smallest edit distance
 * up to a third of the name's length (at least 1), then the shortest candidate starting with `name`
 * (3+ characters); ties broken by the candidates' order. Undefined when none is close.
 */
export function didYouMean(name: string, candidates: Iterable<string>): string | undefined {
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  let prefixed: string | undefined;
  const limit = Math.max(1, Math.floor(name.length / 3));
  for (const c of candidates) {
    const candidate = c.toLowerCase();
    if (candidate === lower) return c;
    const d = editDistance(lower, candidate);
    // Replacing every character is not a typo (`x` should not suggest `a`); a doubled one is (`aa` → `a`).
    if (d <= limit && d < Math.max(name.length, c.length) && d < bestDistance) {
      best = c;
      bestDistance = d;
    }
    if (name.length >= MIN_PREFIX && candidate.startsWith(lower) && (prefixed === undefined || c.length < prefixed.length)) prefixed = c;
  }
  return best ?? prefixed;
}
