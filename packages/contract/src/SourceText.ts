/** A source text with precomputed line starts, so offset → line:column is a binary search. */
export class SourceText {
  readonly lineStarts: readonly number[];

  constructor(
    readonly text: string,
    readonly file?: string,
  ) {
    // A byte order mark takes no column: line 1 starts after it, as an editor shows it.
    const starts = [text.charCodeAt(0) === 0xfeff ? 1 : 0];
    // indexOf rather than a loop over every character: a compile makes one of these per document,
    // and a loop run that rarely stays in the interpreter (a chain's one long `chain:` line was 2 %
    // of its compile); indexOf scans in native code.
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
    this.lineStarts = starts;
  }

  /** 1-based line and column of a 0-based offset (clamped to the text). */
  position(offset: number): { line: number; column: number } {
    const o = Math.max(0, Math.min(offset, this.text.length));
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid]! <= o) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: Math.max(1, o - this.lineStarts[lo]! + 1) };
  }

  /** The length of lineText(line), without building the string. */
  lineLength(line: number): number {
    const start = this.lineStarts[line - 1];
    if (start === undefined) return 0;
    const next = this.lineStarts[line];
    let end = next === undefined ? this.text.length : next - 1;
    if (end > start && this.text.charCodeAt(end - 1) === 13) end--;
    return end - start;
  }

  /** The text of a 1-based line, without its newline. */
  lineText(line: number): string {
    const start = this.lineStarts[line - 1];
    if (start === undefined) return '';
    const next = this.lineStarts[line];
    const end = next === undefined ? this.text.length : next - 1;
    return this.text.slice(start, end).replace(/\r$/, '');
  }
}
