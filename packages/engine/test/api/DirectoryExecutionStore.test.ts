import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
    const execDir = join(dir, 'executions', readdirSync(join(dir, 'executions'))[0]!);
    appendFileSync(join(execDir, 'history.ndjson'), '{"id":4,"type":"Pass'); // crash mid-append
    expect(s.readEvents(EXEC.executionArn).map((e) => e.id)).toEqual([1, 2, 3]);
    s.truncateEvents(EXEC.executionArn, 2);
    expect(s.readEvents(EXEC.executionArn).map((e) => e.id)).toEqual([1, 2]);
    // Writes go through a temporary file that is renamed: none is left behind.
    expect(readdirSync(execDir).sort()).toEqual(['history.ndjson']);
  });

  it('appends an event after a torn last history line as a line of its own', () => {
    // An execution that crashed before its first checkpoint and is then ended while dormant has
    // nothing to truncate to: its last event is appended straight after the torn line.
    const s = new DirectoryExecutionStore(dir);
    s.putExecution(EXEC);
    s.appendEvents(EXEC.executionArn, [ev(1), ev(2)]);
    s.close();
    const execDir = join(dir, 'executions', readdirSync(join(dir, 'executions'))[0]!);
    appendFileSync(join(execDir, 'history.ndjson'), '{"id":3,"type":"Pass'); // crash mid-append
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
    const execDir = () => join(dir, 'executions', readdirSync(join(dir, 'executions'))[0]!);

    it('appends each checkpoint and reads the last one, in this instance and the next', () => {
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(EXEC);
      for (let n = 1; n <= 5; n++) s.putCheckpoint(EXEC.executionArn, cp(n));
      expect(s.readCheckpoint(EXEC.executionArn)).toEqual(cp(5));
      expect(new DirectoryExecutionStore(dir).readCheckpoint(EXEC.executionArn)).toEqual(cp(5));
      expect(readFileSync(join(execDir(), 'checkpoints.ndjson'), 'utf8').trimEnd().split('\n')).toHaveLength(5);
      // No temporary files: appends only.
      expect(readdirSync(execDir()).sort()).toEqual(['checkpoints.ndjson']);
    });

    it('reads the checkpoint before a torn last line, and appends after it as a line of its own', () => {
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(EXEC);
      s.putCheckpoint(EXEC.executionArn, cp(1));
      s.putCheckpoint(EXEC.executionArn, cp(2));
      appendFileSync(join(execDir(), 'checkpoints.ndjson'), '{"stateName":"S3","inp'); // crash mid-append
      const next = new DirectoryExecutionStore(dir);
      expect(next.readCheckpoint(EXEC.executionArn)).toEqual(cp(2));
      next.putCheckpoint(EXEC.executionArn, cp(3));
      expect(new DirectoryExecutionStore(dir).readCheckpoint(EXEC.executionArn)).toEqual(cp(3));
    });

    it('reads nothing from a file whose only line is torn', () => {
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(EXEC);
      s.appendEvents(EXEC.executionArn, [ev(1)]);
      writeFileSync(join(execDir(), 'checkpoints.ndjson'), '{"stateName":');
      expect(s.readCheckpoint(EXEC.executionArn)).toBeUndefined();
      s.putCheckpoint(EXEC.executionArn, cp(1));
      expect(new DirectoryExecutionStore(dir).readCheckpoint(EXEC.executionArn)).toEqual(cp(1));
    });

    it('rewrites the file with the last checkpoint alone once it outgrows 1 MiB', () => {
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(EXEC);
      const big = 'x'.repeat(100_000);
      for (let n = 1; n <= 25; n++) s.putCheckpoint(EXEC.executionArn, cp(n, { big }));
      const size = statSync(join(execDir(), 'checkpoints.ndjson')).size;
      expect(size).toBeLessThanOrEqual(1 << 20);
      expect(new DirectoryExecutionStore(dir).readCheckpoint(EXEC.executionArn)).toEqual(cp(25, { big }));
      expect(readdirSync(execDir()).sort()).toEqual(['checkpoints.ndjson']);
    });

    it('still reads the checkpoint.json of an execution checkpointed by an earlier version, and clears both', () => {
      const s = new DirectoryExecutionStore(dir);
      s.putExecution(EXEC);
      s.appendEvents(EXEC.executionArn, [ev(1)]);
      writeFileSync(join(execDir(), 'checkpoint.json'), JSON.stringify(cp(7)));
      expect(new DirectoryExecutionStore(dir).readCheckpoint(EXEC.executionArn)).toEqual(cp(7));
      s.putCheckpoint(EXEC.executionArn, cp(8));
      expect(s.readCheckpoint(EXEC.executionArn)).toEqual(cp(8));
      s.putCheckpoint(EXEC.executionArn, undefined);
      expect(s.readCheckpoint(EXEC.executionArn)).toBeUndefined();
      expect(readdirSync(execDir()).sort()).toEqual(['history.ndjson']);
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
      expect(readdirSync(join(dir, 'executions'))).toEqual([]);
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
      const dirs = () => readdirSync(join(dir, 'executions')).length;
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

    it('rewrites the journal with the last record per execution once it holds more than twice as many lines', () => {
      const s = new DirectoryExecutionStore(dir);
      for (let i = 0; i < 40; i++) s.putExecution({ ...EXEC, redriveCount: i });
      expect(readFileSync(journal(), 'utf8').trimEnd().split('\n')).toHaveLength(40);
      expect(new DirectoryExecutionStore(dir).load().executions).toEqual([{ ...EXEC, redriveCount: 39 }]);
      expect(readFileSync(journal(), 'utf8').trimEnd().split('\n')).toHaveLength(1);
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
      const file = join(dir, 'executions', readdirSync(join(dir, 'executions'))[0]!, 'history.ndjson');
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
      const file = join(dir, 'executions', readdirSync(join(dir, 'executions'))[0]!, 'checkpoints.ndjson');
      appendFileSync(file, '{"stateName":7}\n');
      const { damaged, options } = quiet();
      expect(new DirectoryExecutionStore(dir, {}, options).readCheckpoint(EXEC.executionArn)).toEqual(cp(1));
      expect(damaged).toEqual([{ file, line: 2, reason: 'it is not a record of this file' }]);
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
      const file = join(dir, 'executions', readdirSync(join(dir, 'executions'))[0]!, 'history.ndjson');
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
