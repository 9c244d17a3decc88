import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DirectoryExecutionStore, type Checkpoint, type ExecutionRecord, type HistoryEvent } from '@stepforge/engine';

const EXEC: ExecutionRecord = {
  executionArn: 'arn:aws:states:us-east-1:123456789012:execution:sm:e1',
  stateMachineArn: 'arn:aws:states:us-east-1:123456789012:stateMachine:sm',
  stateMachineName: 'sm',
  name: 'e1',
  type: 'STANDARD',
  definition: '{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}',
  roleArn: 'arn:aws:iam::123456789012:role/r',
  status: 'RUNNING',
  input: '{}',
  startDate: 1_700_000_000_000,
  redriveCount: 0,
};
const cp = (n: number, variables: Record<string, unknown> = { n }): Checkpoint => ({
  stateName: `S${n}`,
  input: {},
  variables,
  eventCounter: n,
  previousEventId: n,
  transitions: n,
});
const ev = (id: number): HistoryEvent => ({ id, previousEventId: id - 1, timestamp: 1_700_000_000_000 + id, type: 'PassStateEntered' });

describe('Class: DirectoryExecutionStore', () => {
  let dir: string;
  /** The one history file of the store's one execution. */
  const historyFile = () => join(dir, 'histories', readdirSync(join(dir, 'histories'))[0]!);
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'stepforge-store-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps state machines, executions, events and checkpoints for the next instance', () => {
    const a = new DirectoryExecutionStore(dir);
    a.putStateMachine({
      stateMachineArn: EXEC.stateMachineArn,
      name: 'sm',
      type: 'STANDARD',
      definition: EXEC.definition,
      roleArn: EXEC.roleArn,
      creationDate: 1,
      revisionId: 'r1',
    });
    a.putExecution(EXEC);
    a.appendEvents(EXEC.executionArn, [ev(1), ev(2)]);
    a.appendEvents(EXEC.executionArn, [ev(3)]);
    a.putCheckpoint(EXEC.executionArn, {
      stateName: 'P',
      input: {},
      variables: { v: 1 },
      eventCounter: 3,
      previousEventId: 3,
      transitions: 1,
    });

    const b = new DirectoryExecutionStore(dir);
    const snap = b.load();
    expect(snap.stateMachines.map((m) => m.name)).toEqual(['sm']);
    expect(snap.executions).toEqual([EXEC]);
    expect(b.readEvents(EXEC.executionArn).map((e) => e.id)).toEqual([1, 2, 3]);
    expect(b.readCheckpoint(EXEC.executionArn)).toMatchObject({ stateName: 'P', variables: { v: 1 }, eventCounter: 3 });
    b.putCheckpoint(EXEC.executionArn, undefined);
    expect(b.readCheckpoint(EXEC.executionArn)).toBeUndefined();
    b.deleteStateMachine(EXEC.stateMachineArn);
    expect(new DirectoryExecutionStore(dir).load().stateMachines).toEqual([]);
  });

  it('ignores a torn last history line and truncates events past a checkpoint', () => {
    const s = new DirectoryExecutionStore(dir);
    s.putExecution(EXEC);
    s.appendEvents(EXEC.executionArn, [ev(1), ev(2), ev(3)]);
    appendFileSync(historyFile(), '{"id":4,"type":"Pass'); // crash mid-append
    expect(s.readEvents(EXEC.executionArn).map((e) => e.id)).toEqual([1, 2, 3]);
    s.truncateEvents(EXEC.executionArn, 2);
    expect(s.readEvents(EXEC.executionArn).map((e) => e.id)).toEqual([1, 2]);
    // Writes go through a temporary file that is renamed: none is left behind.
    expect(readdirSync(join(dir, 'histories'))).toEqual([basename(historyFile())]);
  });

  it('keeps an execution in one history file: its events, and its checkpoints as lines of their own', () => {
    const s = new DirectoryExecutionStore(dir);
    s.putExecution(EXEC);
    s.appendEvents(EXEC.executionArn, [ev(1)]);
    s.appendCheckpoint(EXEC.executionArn, [ev(2), ev(3)], cp(3));
    s.appendCheckpoint(EXEC.executionArn, [], cp(3, { again: true }));
    s.appendCheckpoint(EXEC.executionArn, [ev(4)], cp(4));
    // No folder per execution, and nothing but the one file.
    expect(readdirSync(dir).sort()).toEqual(['definitions', 'executions.ndjson', 'histories', 'state-machines']);
    expect(readdirSync(join(dir, 'histories'))).toEqual([basename(historyFile())]);
    const lines = readFileSync(historyFile(), 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => l.replace(/^~\d+ [0-9a-f]{8} /, '').slice(0, 14))).toEqual([
      '{"id":1,"previ',
      '{"id":2,"previ',
      '{"id":3,"previ',
      '{"checkpoint":',
      '{"checkpoint":',
      '{"id":4,"previ',
      '{"checkpoint":',
    ]);
    const next = new DirectoryExecutionStore(dir);
    // The events' reader skips the checkpoints, and reports none of them as damaged.
    expect(next.readEvents(EXEC.executionArn)).toEqual([ev(1), ev(2), ev(3), ev(4)]);
    expect(next.readCheckpoint(EXEC.executionArn)).toEqual(cp(4));
    expect(next.damaged).toEqual([]);
  });

  it('keeps the checkpoint a truncation goes back to, so a crash before the next one resumes there again', () => {
    const s = new DirectoryExecutionStore(dir);
    s.putExecution(EXEC);
    s.appendCheckpoint(EXEC.executionArn, [ev(1), ev(2)], cp(2));
    s.appendEvents(EXEC.executionArn, [ev(3), ev(4)]);
    const next = new DirectoryExecutionStore(dir);
    next.load();
    next.truncateEvents(EXEC.executionArn, next.readCheckpoint(EXEC.executionArn)!.eventCounter);
    const again = new DirectoryExecutionStore(dir);
    expect(again.readEvents(EXEC.executionArn).map((e) => e.id)).toEqual([1, 2]);
    expect(again.readCheckpoint(EXEC.executionArn)).toEqual(cp(2));
    // A checkpoint past the kept events goes with them.
    again.truncateEvents(EXEC.executionArn, 1);
    expect(again.readEvents(EXEC.executionArn).map((e) => e.id)).toEqual([1]);
    expect(again.readCheckpoint(EXEC.executionArn)).toBeUndefined();
  });

  it('marks the end with a line: no checkpoint counts after it, in this instance or the next, until a redrive writes one', () => {
    const s = new DirectoryExecutionStore(dir);
    s.putExecution(EXEC);
    s.appendCheckpoint(EXEC.executionArn, [ev(1), ev(2)], cp(2));
    s.appendEvents(EXEC.executionArn, [ev(3)]);
    s.putExecution({ ...EXEC, status: 'FAILED', stopDate: EXEC.startDate + 1 });
    s.putCheckpoint(EXEC.executionArn, undefined);
    expect(s.readCheckpoint(EXEC.executionArn)).toBeUndefined();
    expect(new DirectoryExecutionStore(dir).readCheckpoint(EXEC.executionArn)).toBeUndefined();
    expect(readFileSync(historyFile(), 'utf8').trimEnd().split('\n').at(-1)).toMatch(/ \{"checkpoint":null\}$/);
    // The file is not removed: the history stays readable, and an end takes no metadata change.
    expect(new DirectoryExecutionStore(dir).readEvents(EXEC.executionArn).map((e) => e.id)).toEqual([1, 2, 3]);
    const redrive = new DirectoryExecutionStore(dir);
    redrive.putCheckpoint(EXEC.executionArn, cp(4));
    expect(new DirectoryExecutionStore(dir).readCheckpoint(EXEC.executionArn)).toEqual(cp(4));
    // An execution with no file gets none for its end.
    const other = `${EXEC.executionArn}-none`;
    redrive.putCheckpoint(other, undefined);
    expect(readdirSync(join(dir, 'histories'))).toHaveLength(1);
  });

  it('appends an event after a torn last history line as a line of its own', () => {
    // An execution that crashed before its first checkpoint and is then ended while dormant has
    // nothing to truncate to: its last event is appended straight after the torn line.
    const s = new DirectoryExecutionStore(dir);
    s.putExecution(EXEC);
    s.appendEvents(EXEC.executionArn, [ev(1), ev(2)]);
    s.close();
    appendFileSync(historyFile(), '{"id":3,"type":"Pass'); // crash mid-append
    const next = new DirectoryExecutionStore(dir);
    next.appendEvents(EXEC.executionArn, [ev(3)]);
    next.appendEvents(EXEC.executionArn, [ev(4)]);
    const reader = new DirectoryExecutionStore(dir, {}, { onDamaged: () => {} });
    expect(reader.readEvents(EXEC.executionArn).map((e) => e.id)).toEqual([1, 2, 3, 4]);
    // The torn line is now a damaged line of its own, reported and skipped; no event is lost to it.
    expect(reader.damaged.map((d) => d.line)).toEqual([3]);
  });

  it('appends to the file a truncate put in place of the old one, and opens its files again after close()', () => {
    // The store keeps its files open between appends: a rename over one, or close(), must not lose a line.
    const s = new DirectoryExecutionStore(dir);
    s.putExecution(EXEC);
    s.appendEvents(EXEC.executionArn, [ev(1), ev(2), ev(3)]);
    s.putCheckpoint(EXEC.executionArn, cp(3));
    s.truncateEvents(EXEC.executionArn, 2);
    s.appendEvents(EXEC.executionArn, [ev(3)]);
    s.close();
    s.appendEvents(EXEC.executionArn, [ev(4)]);
    s.putCheckpoint(EXEC.executionArn, cp(4));
    s.putExecution({ ...EXEC, status: 'SUCCEEDED', stopDate: Date.now() });
    const next = new DirectoryExecutionStore(dir);
    expect(next.readEvents(EXEC.executionArn).map((e) => e.id)).toEqual([1, 2, 3, 4]);
    expect(next.readCheckpoint(EXEC.executionArn)).toEqual(cp(4));
    expect(next.load().executions.map((e) => e.status)).toEqual(['SUCCEEDED']);
  });

  it('keeps every line of more executions in flight than it holds files open for', () => {
    // Past its limit of open files the store closes the oldest; the next append opens it again.
    const openFiles = () => (existsSync('/proc/self/fd') ? readdirSync('/proc/self/fd').length : 0);
    const before = openFiles();
    const s = new DirectoryExecutionStore(dir);
    const arns = Array.from({ length: 150 }, (_, i) => `${EXEC.executionArn}-${i}`);
    for (const arn of arns) s.appendEvents(arn, [ev(1)]);
    for (const arn of arns) s.putCheckpoint(arn, cp(1));
    for (const arn of arns) s.appendEvents(arn, [ev(2)]);
    expect(openFiles() - before).toBeLessThanOrEqual(128);
    s.close();
    expect(openFiles()).toBe(before);
    const next = new DirectoryExecutionStore(dir);
    for (const arn of arns) {
      expect(next.readEvents(arn).map((e) => e.id)).toEqual([1, 2]);
      expect(next.readCheckpoint(arn)).toEqual(cp(1));
    }
  });

  describe('Method: putCheckpoint / readCheckpoint', () => {
    it('appends each checkpoint and reads the last one, in this instance and the next', () => {
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(EXEC);
      for (let n = 1; n <= 5; n++) s.putCheckpoint(EXEC.executionArn, cp(n));
      expect(s.readCheckpoint(EXEC.executionArn)).toEqual(cp(5));
      expect(new DirectoryExecutionStore(dir).readCheckpoint(EXEC.executionArn)).toEqual(cp(5));
      expect(readFileSync(historyFile(), 'utf8').trimEnd().split('\n')).toHaveLength(5);
      // No temporary files: appends only.
      expect(readdirSync(join(dir, 'histories'))).toEqual([basename(historyFile())]);
    });

    it('reads the checkpoint before a torn last line, and appends after it as a line of its own', () => {
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(EXEC);
      s.putCheckpoint(EXEC.executionArn, cp(1));
      s.putCheckpoint(EXEC.executionArn, cp(2));
      appendFileSync(historyFile(), '~90 01234567 {"checkpoint":{"stateName":"S3","inp'); // crash mid-append
      const next = new DirectoryExecutionStore(dir);
      expect(next.readCheckpoint(EXEC.executionArn)).toEqual(cp(2));
      next.putCheckpoint(EXEC.executionArn, cp(3));
      expect(new DirectoryExecutionStore(dir).readCheckpoint(EXEC.executionArn)).toEqual(cp(3));
    });

    it('reads nothing from a file whose only line is torn', () => {
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(EXEC);
      s.appendEvents(EXEC.executionArn, [ev(1)]);
      s.close();
      writeFileSync(historyFile(), '{"checkpoint":{"stateName":');
      expect(s.readCheckpoint(EXEC.executionArn)).toBeUndefined();
      s.putCheckpoint(EXEC.executionArn, cp(1));
      expect(new DirectoryExecutionStore(dir).readCheckpoint(EXEC.executionArn)).toEqual(cp(1));
    });

    it('rewrites the file with its events and the last checkpoint alone once checkpoints outgrow 1 MiB and the rest of it', () => {
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(EXEC);
      const big = (n: number) => `${n}`.padEnd(100_000, 'x');
      for (let n = 1; n <= 25; n++) s.appendCheckpoint(EXEC.executionArn, [ev(n)], cp(n, { big: big(n) }));
      const size = statSync(historyFile()).size;
      expect(size).toBeLessThanOrEqual((1 << 20) + 200_000);
      const next = new DirectoryExecutionStore(dir);
      expect(next.readCheckpoint(EXEC.executionArn)).toEqual(cp(25, { big: big(25) }));
      expect(next.readEvents(EXEC.executionArn).map((e) => e.id)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
      expect(next.damaged).toEqual([]);
      expect(readdirSync(join(dir, 'histories'))).toEqual([basename(historyFile())]);
      // Appends go on after the rewrite, to the new file.
      s.appendCheckpoint(EXEC.executionArn, [ev(26)], cp(26));
      expect(new DirectoryExecutionStore(dir).readCheckpoint(EXEC.executionArn)).toEqual(cp(26));
      expect(new DirectoryExecutionStore(dir).readEvents(EXEC.executionArn)).toHaveLength(26);
    });

    it('keeps every checkpoint while they stay under the rest of the file (a large history is not rewritten for small checkpoints)', () => {
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(EXEC);
      const big = { output: 'y'.repeat(200_000) };
      for (let n = 1; n <= 12; n++)
        s.appendCheckpoint(EXEC.executionArn, [{ ...ev(n), ...big }], cp(n, { big: `${n}`.padEnd(150_000, 'x') }));
      // 1.8 MB of checkpoints, 2.4 MB of events: all kept.
      expect(readFileSync(historyFile(), 'utf8').match(/\{"checkpoint":/g)).toHaveLength(12);
    });
  });

  describe('Method: appendCheckpoint, variables as changes', () => {
    const checkpointLines = () =>
      readFileSync(historyFile(), 'utf8')
        .trimEnd()
        .split('\n')
        .map(
          (l) =>
            JSON.parse(l.replace(/^~\d+ [0-9a-f]{8} /, '')) as {
              checkpoint: Record<string, unknown> | null;
              set?: unknown;
              unset?: unknown;
            },
        )
        .filter((l) => 'checkpoint' in l);

    it('writes the variables whole first, then only what changed, and reads them back whole', () => {
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(EXEC);
      const v1 = Object.freeze({ a: { big: 'a'.repeat(500) }, b: 1 });
      const v2 = Object.freeze({ ...v1, c: [1, 2] });
      const v3 = Object.freeze({ a: v1.a, c: v2.c, d: null });
      s.appendCheckpoint(EXEC.executionArn, [ev(1)], cp(1, v1));
      s.appendCheckpoint(EXEC.executionArn, [ev(2)], cp(2, v1)); // no Assign since: the same object
      s.appendCheckpoint(EXEC.executionArn, [ev(3)], cp(3, v2));
      s.appendCheckpoint(EXEC.executionArn, [ev(4)], cp(4, v3));
      expect(checkpointLines().map((l) => [l.checkpoint!.stateName, 'variables' in l.checkpoint!, l.set, l.unset])).toEqual([
        ['S1', true, undefined, undefined],
        ['S2', false, {}, undefined],
        ['S3', false, { c: [1, 2] }, undefined],
        ['S4', false, { d: null }, ['b']],
      ]);
      const next = new DirectoryExecutionStore(dir);
      expect(next.readCheckpoint(EXEC.executionArn)).toEqual(cp(4, { a: { big: 'a'.repeat(500) }, c: [1, 2], d: null }));
      expect(next.damaged).toEqual([]);
      // A truncation keeps the checkpoint whole.
      next.truncateEvents(EXEC.executionArn, 4);
      expect(checkpointLines().map((l) => 'variables' in l.checkpoint!)).toEqual([true]);
      expect(new DirectoryExecutionStore(dir).readCheckpoint(EXEC.executionArn)).toEqual(
        cp(4, { a: { big: 'a'.repeat(500) }, c: [1, 2], d: null }),
      );
    });

    it('writes them whole again once the changes since the last whole ones outgrow them', () => {
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(EXEC);
      let vars: Record<string, unknown> = { seed: 's'.repeat(1000) };
      for (let n = 1; n <= 12; n++) {
        vars = Object.freeze({ ...vars, [`out${n}`]: `${n}`.padEnd(300, '.') });
        s.appendCheckpoint(EXEC.executionArn, [ev(n)], cp(n, vars));
      }
      const whole = checkpointLines().map((l) => 'variables' in l.checkpoint!);
      // Whole at 1; 300-byte changes until they pass the 1,300-byte whole line (at 5); and so on.
      expect(whole.filter(Boolean).length).toBeGreaterThanOrEqual(2);
      expect(whole.filter(Boolean).length).toBeLessThanOrEqual(4);
      expect(whole[0]).toBe(true);
      expect(new DirectoryExecutionStore(dir).readCheckpoint(EXEC.executionArn)).toEqual(cp(12, vars));
    });

    it('resumes from the checkpoint before a damaged line, never applying a change across it', () => {
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(EXEC);
      const pad = 'p'.repeat(1000);
      const v1 = Object.freeze({ x: 1, pad });
      s.appendCheckpoint(EXEC.executionArn, [ev(1)], cp(1, v1));
      s.appendCheckpoint(EXEC.executionArn, [ev(2)], cp(2, Object.freeze({ x: 2, pad })));
      s.appendCheckpoint(EXEC.executionArn, [ev(3)], cp(3, Object.freeze({ x: 2, y: 3, pad })));
      s.close();
      // The change of line 4 (x: 2) is damaged: the checkpoint after it must not read x as 1.
      const lines = readFileSync(historyFile(), 'utf8').split('\n');
      lines[3] = lines[3]!.replace('"x":2', '"x":7');
      writeFileSync(historyFile(), lines.join('\n'));
      const { damaged, options } = { damaged: [] as number[], options: { onDamaged: (d: { line: number }) => damaged.push(d.line) } };
      expect(new DirectoryExecutionStore(dir, {}, options).readCheckpoint(EXEC.executionArn)).toEqual(cp(1, { x: 1, pad }));
      expect(damaged).toEqual([4]);
      // The next whole checkpoint counts again.
      const next = new DirectoryExecutionStore(dir, {}, { onDamaged: () => {} });
      next.appendCheckpoint(EXEC.executionArn, [], cp(4, Object.freeze({ x: 4 })));
      expect(new DirectoryExecutionStore(dir, {}, { onDamaged: () => {} }).readCheckpoint(EXEC.executionArn)).toEqual(cp(4, { x: 4 }));
    });

    it('writes the first checkpoint after an end whole (a redrive), and applies no change across an end', () => {
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(EXEC);
      s.appendCheckpoint(EXEC.executionArn, [ev(1)], cp(1, Object.freeze({ x: 1 })));
      s.putCheckpoint(EXEC.executionArn, undefined);
      s.putCheckpoint(EXEC.executionArn, cp(2, Object.freeze({ x: 2 })));
      expect(checkpointLines().map((l) => l.checkpoint !== null && 'variables' in l.checkpoint)).toEqual([true, false, true]);
      expect(new DirectoryExecutionStore(dir).readCheckpoint(EXEC.executionArn)).toEqual(cp(2, { x: 2 }));
      // A change line straight after the end (not something this store writes) has nothing to apply to.
      appendFileSync(
        historyFile(),
        '{"checkpoint":null}\n{"checkpoint":{"stateName":"S3","input":{},"eventCounter":3,"previousEventId":3,"transitions":3},"set":{}}\n',
      );
      expect(new DirectoryExecutionStore(dir).readCheckpoint(EXEC.executionArn)).toBeUndefined();
    });
  });

  describe('Method: load, over what an earlier version wrote', () => {
    /** The old store named an execution's folder as the new one names its file (a readable tail and a hash of the ARN). */
    const key = (arn: string) =>
      `${arn
        .split(':')
        .slice(-2)
        .join('_')
        .replace(/[^A-Za-z0-9_.-]/g, '_')
        .slice(0, 60)}-${createHash('sha256').update(arn).digest('hex').slice(0, 16)}`;
    /** The layout before: a folder per execution with history.ndjson and checkpoints.ndjson (or checkpoint.json). */
    const writeOldLayout = (history: string, checkpoints: { ndjson?: string; json?: string }, records = true) => {
      const folder = join(dir, 'executions', key(EXEC.executionArn));
      mkdirSync(folder, { recursive: true });
      const sha = createHash('sha256').update(EXEC.definition).digest('hex');
      mkdirSync(join(dir, 'definitions'), { recursive: true });
      writeFileSync(join(dir, 'definitions', `${sha}.asl.json`), EXEC.definition);
      const { definition: _d, ...rest } = EXEC;
      if (records) writeFileSync(join(dir, 'executions.ndjson'), `${JSON.stringify({ ...rest, definitionSha256: sha })}\n`);
      if (history !== '') writeFileSync(join(folder, 'history.ndjson'), history);
      if (checkpoints.ndjson !== undefined) writeFileSync(join(folder, 'checkpoints.ndjson'), checkpoints.ndjson);
      if (checkpoints.json !== undefined) writeFileSync(join(folder, 'checkpoint.json'), checkpoints.json);
      return folder;
    };
    const framed = (v: unknown) => {
      const json = JSON.stringify(v);
      return `~${Buffer.byteLength(json)} ${crc32(json).toString(16).padStart(8, '0')} ${json}\n`;
    };

    it('moves each history and its last checkpoint into one file, removes the old folders, and resumes as before', () => {
      const folder = writeOldLayout(framed(ev(1)) + JSON.stringify(ev(2)) + '\n' + framed(ev(3)) + '{"id":4,"ty', {
        ndjson: framed(cp(2)) + framed(cp(3)),
      });
      // A read-only store (a command that only reads) reads the old layout where it is, and changes nothing.
      const reader = new DirectoryExecutionStore(dir, {}, { readOnly: true });
      expect(reader.load().executions).toEqual([EXEC]);
      expect(reader.readEvents(EXEC.executionArn).map((e) => e.id)).toEqual([1, 2, 3]);
      expect(reader.readCheckpoint(EXEC.executionArn)).toEqual(cp(3));
      expect(readdirSync(folder).sort()).toEqual(['checkpoints.ndjson', 'history.ndjson']);
      expect(existsSync(join(dir, 'histories'))).toBe(false);

      const s = new DirectoryExecutionStore(dir);
      expect(s.load().executions).toEqual([EXEC]);
      expect(existsSync(join(dir, 'executions'))).toBe(false);
      expect(readdirSync(join(dir, 'histories'))).toEqual([`${key(EXEC.executionArn)}.ndjson`]);
      expect(s.readEvents(EXEC.executionArn).map((e) => e.id)).toEqual([1, 2, 3]);
      expect(s.readCheckpoint(EXEC.executionArn)).toEqual(cp(3));
      // The torn line was never whole: it is not carried over as a damaged line.
      expect(s.damaged).toEqual([]);
      // It runs on in the new layout.
      s.truncateEvents(EXEC.executionArn, 3);
      s.appendCheckpoint(EXEC.executionArn, [ev(4)], cp(4));
      const next = new DirectoryExecutionStore(dir);
      next.load();
      expect(next.readEvents(EXEC.executionArn).map((e) => e.id)).toEqual([1, 2, 3, 4]);
      expect(next.readCheckpoint(EXEC.executionArn)).toEqual(cp(4));
    });

    it('moves the checkpoint.json of a still earlier version, and a history with no checkpoint', () => {
      writeOldLayout(framed(ev(1)), { json: JSON.stringify(cp(1)) });
      const s = new DirectoryExecutionStore(dir);
      s.load();
      expect(s.readCheckpoint(EXEC.executionArn)).toEqual(cp(1));
      expect(s.readEvents(EXEC.executionArn)).toEqual([ev(1)]);
      rmSync(dir, { recursive: true });
      writeOldLayout(framed(ev(1)) + framed(ev(2)), {});
      const t = new DirectoryExecutionStore(dir);
      t.load();
      expect(t.readCheckpoint(EXEC.executionArn)).toBeUndefined();
      expect(t.readEvents(EXEC.executionArn).map((e) => e.id)).toEqual([1, 2]);
      expect(existsSync(join(dir, 'executions'))).toBe(false);
    });

    it('after a crash between writing the new file and removing the old ones, keeps the new file and removes the old', () => {
      writeOldLayout(framed(ev(1)) + framed(ev(2)), { ndjson: framed(cp(2)) });
      const s = new DirectoryExecutionStore(dir);
      s.load();
      // The state after the crash: the new file (which has since taken another event) and the old folder again.
      s.appendCheckpoint(EXEC.executionArn, [ev(3)], cp(3));
      s.close();
      writeOldLayout(framed(ev(1)) + framed(ev(2)), { ndjson: framed(cp(2)) }, false);
      const next = new DirectoryExecutionStore(dir);
      next.load();
      expect(existsSync(join(dir, 'executions'))).toBe(false);
      expect(next.readEvents(EXEC.executionArn).map((e) => e.id)).toEqual([1, 2, 3]);
      expect(next.readCheckpoint(EXEC.executionArn)).toEqual(cp(3));
    });

    it('leaves a folder holding a file it does not know (a damaged execution.json) where it is, with the rest moved', () => {
      const folder = writeOldLayout(framed(ev(1)), {});
      writeFileSync(join(folder, 'execution.json'), '{"not":"a record"}');
      const s = new DirectoryExecutionStore(dir, {}, { onDamaged: () => {} });
      s.load();
      expect(readdirSync(folder)).toEqual(['execution.json']);
      expect(readdirSync(join(dir, 'histories'))).toHaveLength(1);
    });
  });

  describe('Method: putExecution / load', () => {
    const journal = () => join(dir, 'executions.ndjson');
    const other = (n: number): ExecutionRecord => ({ ...EXEC, executionArn: `${EXEC.executionArn}-${n}`, name: `e${n}` });

    it('appends records to one journal, the last line per execution counting, with each definition stored once', () => {
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(EXEC);
      s.putExecution(other(2));
      s.putExecution({ ...EXEC, status: 'SUCCEEDED', output: '{"ok":true}', stopDate: EXEC.startDate + 5 });
      const loaded = new DirectoryExecutionStore(dir, { now: () => EXEC.startDate + 1000 }).load().executions;
      expect(loaded).toEqual([{ ...EXEC, status: 'SUCCEEDED', output: '{"ok":true}', stopDate: EXEC.startDate + 5 }, other(2)]);
      // Records of one definition share its text once loaded, and the journal holds its hash only.
      expect(loaded[0]!.definition).toBe(loaded[1]!.definition);
      expect(readFileSync(journal(), 'utf8')).not.toContain('"StartAt"');
      expect(readdirSync(join(dir, 'definitions'))).toHaveLength(1);
      // Nothing per execution until it has events or checkpoints.
      expect(readdirSync(join(dir, 'histories'))).toEqual([]);
    });

    it('skips a torn last line, and appends after it as a line of its own', () => {
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(EXEC);
      appendFileSync(journal(), '{"executionArn":"arn:aws:states:us-east-1:123456789012:execution:sm:e1","sta'); // crash mid-append
      const next = new DirectoryExecutionStore(dir);
      expect(next.load().executions).toEqual([EXEC]);
      next.putExecution({ ...EXEC, status: 'ABORTED' });
      expect(new DirectoryExecutionStore(dir).load().executions).toEqual([{ ...EXEC, status: 'ABORTED' }]);
    });

    it('moves the execution.json records of an earlier version into the journal', () => {
      const legacyDir = join(dir, 'executions', 'sm_e9-legacy');
      mkdirSync(legacyDir, { recursive: true });
      writeFileSync(join(legacyDir, 'execution.json'), JSON.stringify(other(9)));
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(EXEC);
      expect(s.load().executions).toEqual([EXEC, other(9)]);
      expect(existsSync(join(legacyDir, 'execution.json'))).toBe(false);
      expect(new DirectoryExecutionStore(dir).load().executions).toEqual([EXEC, other(9)]);
    });

    it('drops ended executions past the retention period, with their files, and keeps running ones however old', () => {
      const DAY = 24 * 3600 * 1000;
      const now = EXEC.startDate + 100 * DAY;
      const ended = (n: number, daysAgo: number): ExecutionRecord => ({
        ...other(n),
        status: 'SUCCEEDED',
        output: '{}',
        stopDate: now - daysAgo * DAY,
      });
      const s = new DirectoryExecutionStore(dir);
      for (const r of [ended(1, 91), ended(2, 89), other(3), { ...other(4), status: 'FAILED' as const, stopDate: now - 200 * DAY }]) {
        s.putExecution(r);
        s.appendEvents(r.executionArn, [ev(1)]);
      }
      const dirs = () => readdirSync(join(dir, 'histories')).length;
      expect(dirs()).toBe(4);
      // 0 keeps everything.
      expect(new DirectoryExecutionStore(dir, { ms: 0, now: () => now }).load().executions.map((r) => r.name)).toEqual([
        'e1',
        'e2',
        'e3',
        'e4',
      ]);
      const kept = new DirectoryExecutionStore(dir, { now: () => now }).load().executions;
      expect(kept.map((r) => [r.name, r.status])).toEqual([
        ['e2', 'SUCCEEDED'],
        ['e3', 'RUNNING'],
      ]);
      expect(dirs()).toBe(2);
      expect(readFileSync(journal(), 'utf8').trimEnd().split('\n')).toHaveLength(2);
      const next = new DirectoryExecutionStore(dir, { now: () => now });
      expect(next.load().executions.map((r) => r.name)).toEqual(['e2', 'e3']);
      expect(next.readEvents(ended(1, 91).executionArn)).toEqual([]);
      expect(next.readEvents(ended(2, 89).executionArn)).toEqual([ev(1)]);
      // A shorter period, as STEPFORGE_EXECUTION_RETENTION_DAYS sets it.
      expect(new DirectoryExecutionStore(dir, { ms: 30 * DAY, now: () => now }).load().executions.map((r) => r.name)).toEqual(['e3']);
    });

    it('rewrites the journal with the last record per execution once it holds half as many lines again', () => {
      const s = new DirectoryExecutionStore(dir);
      for (let i = 0; i < 40; i++) s.putExecution({ ...EXEC, redriveCount: i });
      expect(readFileSync(journal(), 'utf8').trimEnd().split('\n')).toHaveLength(40);
      expect(new DirectoryExecutionStore(dir).load().executions).toEqual([{ ...EXEC, redriveCount: 39 }]);
      expect(readFileSync(journal(), 'utf8').trimEnd().split('\n')).toHaveLength(1);
    });

    it('rewrites a journal of executions that each started and ended (two lines each), in their first order', () => {
      const run = (n: number): ExecutionRecord => ({ ...EXEC, executionArn: `${EXEC.executionArn}-${n}`, name: `e${n}` });
      const s = new DirectoryExecutionStore(dir);
      // 20 started and ended, and 20 started (each line of its own): 60 lines, for 40 executions, is kept.
      for (let i = 0; i < 20; i++) s.putExecution(run(i));
      for (let i = 0; i < 20; i++) s.putExecution({ ...run(i), status: 'SUCCEEDED', stopDate: Date.now(), output: '{}' });
      for (let i = 20; i < 40; i++) s.putExecution(run(i));
      const lines = () => readFileSync(journal(), 'utf8').trimEnd().split('\n');
      expect(new DirectoryExecutionStore(dir).load().executions).toHaveLength(40);
      expect(lines()).toHaveLength(60);
      // Their ends too: 80 lines for 40 executions, rewritten as one each, in the order they started.
      for (let i = 20; i < 40; i++) s.putExecution({ ...run(i), status: 'FAILED', stopDate: Date.now() });
      const loaded = new DirectoryExecutionStore(dir).load().executions;
      expect(loaded.map((r) => [r.name, r.status])).toEqual([
        ...Array.from({ length: 20 }, (_, i) => [`e${i}`, 'SUCCEEDED']),
        ...Array.from({ length: 20 }, (_, i) => [`e${i + 20}`, 'FAILED']),
      ]);
      expect(lines()).toHaveLength(40);
      expect(new DirectoryExecutionStore(dir).load().executions).toEqual(loaded);
    });
  });

  describe('Method: a damaged journal, history or checkpoint file', () => {
    const journal = () => join(dir, 'executions.ndjson');
    const other = (n: number): ExecutionRecord => ({ ...EXEC, executionArn: `${EXEC.executionArn}-${n}`, name: `e${n}` });
    const quiet = () => {
      const damaged: { file: string; line: number; reason: string }[] = [];
      return { damaged, options: { onDamaged: (d: { file: string; line: number; reason: string }) => damaged.push(d) } };
    };

    it('frames each line with its length and CRC-32', () => {
      new DirectoryExecutionStore(dir).putExecution(EXEC);
      expect(readFileSync(journal(), 'utf8')).toMatch(/^~\d+ [0-9a-f]{8} \{"executionArn":/);
    });

    it('skips a line whose bytes changed, keeps the runs around it, and reports the file and line', () => {
      const s = new DirectoryExecutionStore(dir);
      for (const n of [1, 2, 3]) s.putExecution(other(n));
      const lines = readFileSync(journal(), 'utf8').split('\n');
      // One byte of the second record changed (e1-2 → e1-7): still JSON, its checksum no longer matches.
      lines[1] = lines[1]!.replace('"name":"e2"', '"name":"e7"');
      writeFileSync(journal(), lines.join('\n'));
      const { damaged, options } = quiet();
      const loaded = new DirectoryExecutionStore(dir, {}, options).load().executions;
      expect(loaded.map((r) => r.name)).toEqual(['e1', 'e3']);
      expect(damaged).toEqual([{ file: journal(), line: 2, reason: 'its checksum does not match' }]);
    });

    it('skips lines of the wrong shape (before: every command failed on them), and keeps the rest', () => {
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(other(1));
      appendFileSync(journal(), 'null\n[1,2]\n"text"\n{"executionArn":5}\n{}\ngarbage \u0000\u0001\n~12 00000000 {"a":1}\n');
      s.putExecution(other(2));
      const { damaged, options } = quiet();
      const loaded = new DirectoryExecutionStore(dir, {}, options).load().executions;
      expect(loaded.map((r) => r.name)).toEqual(['e1', 'e2']);
      expect(damaged.map((d) => [d.line, d.reason])).toEqual([
        [2, 'it is not a record of this file'],
        [3, 'it is not a record of this file'],
        [4, 'it is not a record of this file'],
        [5, 'it is not a record of this file'],
        [6, 'it is not a record of this file'],
        [7, 'it is not JSON'],
        [8, 'its length is not the 12 bytes its frame says'],
      ]);
    });

    it('keeps the history after a damaged event (before: every event after it was dropped)', () => {
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(EXEC);
      s.appendEvents(EXEC.executionArn, [ev(1)]);
      const file = historyFile();
      appendFileSync(file, '~9 deadbeef {"id":2,}\n');
      s.appendEvents(EXEC.executionArn, [ev(3), ev(4)]);
      const { damaged, options } = quiet();
      expect(new DirectoryExecutionStore(dir, {}, options).readEvents(EXEC.executionArn).map((e) => e.id)).toEqual([1, 3, 4]);
      expect(damaged).toEqual([{ file, line: 2, reason: 'its checksum does not match' }]);
    });

    it('resumes from the last whole checkpoint when a later one is damaged', () => {
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(EXEC);
      s.putCheckpoint(EXEC.executionArn, cp(1));
      const file = historyFile();
      appendFileSync(file, '{"checkpoint":{"stateName":7}}\n');
      const { damaged, options } = quiet();
      const next = new DirectoryExecutionStore(dir, {}, options);
      expect(next.readCheckpoint(EXEC.executionArn)).toEqual(cp(1));
      expect(damaged).toEqual([{ file, line: 2, reason: 'it is not a record of this file' }]);
      // The events' reader leaves checkpoint lines to the checkpoint's reader.
      damaged.length = 0;
      expect(new DirectoryExecutionStore(dir, {}, options).readEvents(EXEC.executionArn)).toEqual([]);
      expect(damaged).toEqual([]);
    });

    it('reads the unframed lines earlier versions wrote', () => {
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(other(1));
      const { definition: _d, ...rest } = other(2);
      const sha = readdirSync(join(dir, 'definitions'))[0]!.replace('.asl.json', '');
      appendFileSync(journal(), JSON.stringify({ ...rest, definitionSha256: sha }) + '\n');
      const { damaged, options } = quiet();
      expect(new DirectoryExecutionStore(dir, {}, options).load().executions.map((r) => r.name)).toEqual(['e1', 'e2']);
      expect(damaged).toEqual([]);
    });

    it('reports each damaged line once, on stderr by default, naming the file and line', () => {
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(EXEC);
      s.appendEvents(EXEC.executionArn, [ev(1)]);
      const file = historyFile();
      appendFileSync(file, 'garbage\n');
      const written: string[] = [];
      const write = process.stderr.write.bind(process.stderr);
      process.stderr.write = ((t: string) => {
        written.push(t);
        return true;
      }) as typeof process.stderr.write;
      try {
        const r = new DirectoryExecutionStore(dir);
        r.readEvents(EXEC.executionArn);
        r.readEvents(EXEC.executionArn);
      } finally {
        process.stderr.write = write;
      }
      expect(written).toEqual([`warning: ${file}:2: skipped a damaged engine record (it is not JSON); the other records are kept\n`]);
    });
  });
});

describe('Class: DirectoryExecutionStore, with spare history files', () => {
  let dir: string;
  const exec = (name: string): ExecutionRecord => ({ ...EXEC, name, executionArn: `${EXEC.executionArn.slice(0, -2)}${name}` });
  const spares = () => (existsSync(join(dir, 'spares')) ? readdirSync(join(dir, 'spares')).sort() : []);
  const histories = () => readdirSync(join(dir, 'histories')).sort();
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'stepforge-spares-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('makes spares only once executions start, and renames one to each new history, which reads as ever', async () => {
    const s = new DirectoryExecutionStore(dir, {}, { spareFiles: 4 });
    s.load();
    expect(spares()).toEqual([]);
    s.putExecution(exec('a'));
    s.appendEvents(exec('a').executionArn, [ev(1)]);
    // The first history was made here; one taken calls for two spares.
    await s.sparesSettled();
    expect(spares()).toHaveLength(2);
    const ready = spares();
    s.putExecution(exec('b'));
    s.appendEvents(exec('b').executionArn, [ev(1), ev(2)]);
    s.appendCheckpoint(exec('b').executionArn, [ev(3)], cp(3));
    // One spare became b's history: its name left the folder.
    expect(ready.filter((f) => !spares().includes(f))).toHaveLength(1);
    // Two taken call for four: the limit.
    await s.sparesSettled();
    expect(spares()).toHaveLength(4);
    for (const f of spares()) expect(statSync(join(dir, 'spares', f)).size).toBe(0);
    expect(histories()).toHaveLength(2);
    expect(s.readEvents(exec('b').executionArn).map((e) => e.id)).toEqual([1, 2, 3]);
    expect(s.readCheckpoint(exec('b').executionArn)).toMatchObject({ stateName: 'S3', eventCounter: 3 });
    s.putCheckpoint(exec('b').executionArn, undefined);
    await s.close();

    // The next store reads the same, and takes the spares left behind.
    const next = new DirectoryExecutionStore(dir, {}, { spareFiles: 4 });
    expect(
      next
        .load()
        .executions.map((e) => e.name)
        .sort(),
    ).toEqual(['a', 'b']);
    expect(next.readEvents(exec('b').executionArn).map((e) => e.id)).toEqual([1, 2, 3]);
    expect(next.readCheckpoint(exec('b').executionArn)).toBeUndefined();
    const left = spares();
    expect(left.length).toBeGreaterThan(0);
    next.putExecution(exec('c'));
    next.appendEvents(exec('c').executionArn, [ev(1)]);
    expect(left.filter((f) => !spares().includes(f))).toHaveLength(1);
    expect(next.readEvents(exec('c').executionArn).map((e) => e.id)).toEqual([1]);
    await next.close();
  });

  it('never puts a spare in place of a history that is there, and appends to it after its torn line', async () => {
    const s = new DirectoryExecutionStore(dir, {}, { spareFiles: 4 });
    s.load();
    s.putExecution(exec('a'));
    s.appendEvents(exec('a').executionArn, [ev(1), ev(2)]);
    await s.close();
    const file = join(dir, 'histories', histories()[0]!);
    appendFileSync(file, '{"id":3,"type":"Pass'); // crash mid-append
    const next = new DirectoryExecutionStore(dir, {}, { spareFiles: 4 });
    next.load();
    const before = spares();
    next.appendEvents(exec('a').executionArn, [ev(3)]);
    expect(spares()).toEqual(before);
    expect(next.readEvents(exec('a').executionArn).map((e) => e.id)).toEqual([1, 2, 3]);
    await next.close();
  });

  it('removes on load a spare that is not empty, and never takes it', async () => {
    mkdirSync(join(dir, 'spares'), { recursive: true });
    writeFileSync(join(dir, 'spares', '1-x-1.ndjson'), '{"id":9,"type":"PassStateEntered"}\n');
    writeFileSync(join(dir, 'spares', '1-x-2.ndjson'), '');
    writeFileSync(join(dir, 'spares', 'notes.txt'), '');
    const s = new DirectoryExecutionStore(dir, {}, { spareFiles: 4 });
    s.load();
    expect(spares()).toEqual(['1-x-2.ndjson']);
    s.putExecution(exec('a'));
    s.appendEvents(exec('a').executionArn, [ev(1)]);
    expect(spares()).not.toContain('1-x-2.ndjson');
    expect(s.readEvents(exec('a').executionArn).map((e) => e.id)).toEqual([1]);
    await s.close();
  });

  it('a read-only store makes and takes none', async () => {
    const w = new DirectoryExecutionStore(dir, {}, { spareFiles: 4 });
    w.load();
    w.putExecution(exec('a'));
    w.appendEvents(exec('a').executionArn, [ev(1)]);
    await w.sparesSettled();
    await w.close();
    const left = spares();
    const r = new DirectoryExecutionStore(dir, {}, { spareFiles: 4, readOnly: true });
    r.load();
    r.putExecution(exec('b'));
    r.appendEvents(exec('b').executionArn, [ev(1)]);
    expect(spares()).toEqual(left);
    expect(histories()).toHaveLength(1);
  });
});
