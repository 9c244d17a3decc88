import { createHash } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Checkpoint, HistoryEvent } from '../interpreter/types.js';
import type { ExecutionRecord, ExecutionStore, StateMachineRecord, StoreSnapshot } from './ExecutionStore.js';
import { frameLine, isCheckpoint, isHistoryEvent, isStoredExecution, readLines, type DamagedLine } from './journalLines.js';

/**
 * An ExecutionStore in a directory of JSON files, so a restarted server loses nothing:
 *
 * ```
 * <dir>/state-machines/<key>.json             one record per state machine
 * <dir>/executions.ndjson                     execution records, appended; the last line per ARN counts
 * <dir>/definitions/<sha256>.asl.json         each definition an execution runs, once
 * <dir>/executions/<key>/history.ndjson       history events, one per line, appended
 * <dir>/executions/<key>/checkpoints.ndjson   checkpoints (top-level transitions), appended; the last line counts
 * ```
 *
 * State machine records are written to a temporary file and renamed over the old one, so a crash
 * leaves either the old or the new version. Everything an execution writes is appended: a rename
 * over an existing file costs about as much as a data flush on ext4 (auto_da_alloc), measured at
 * ~0.4 ms each, and a running execution writes its record twice and a checkpoint at every
 * transition; and one journal of records, whose lines carry a definition's hash rather than its
 * text, is one file to read at start-up where a file per execution cost ~0.2 ms each (3,000 runs
 * added 0.6 s to every start). A torn last line (a crash mid-append) is ignored on read in every
 * file, and the next append starts a line of its own; events past the checkpoint are dropped on
 * resume. The journal is rewritten with the last record per execution once it holds more than twice
 * as many lines; the checkpoint file with its last line alone once it outgrows MAX_CHECKPOINT_FILE,
 * and it is removed when the execution ends. What earlier versions wrote (`executions/<key>/
 * execution.json`, `checkpoint.json`) is still read, and records move into the journal on the load
 * of a directory that has no journal yet. Ended executions past the retention period (90 days by
 * default) leave the journal and their files on load.
 *
 * Each line of the append-only files is framed with its length and CRC-32 (journalLines.ts): a
 * damaged line (garbage, a flipped byte, a record of the wrong shape) is skipped and reported
 * (`onDamaged`, by default a warning on stderr naming the file and line), and every other line is
 * kept, so one bad record never hides the runs around it nor stops the engine from loading.
 * Unframed lines, as earlier versions wrote them, are still read.
 */
export class DirectoryExecutionStore implements ExecutionStore {
  readonly durable = true;
  private readonly machinesDir: string;
  private readonly executionsDir: string;
  /**
   * Execution directories by ARN, once known to exist: every top-level transition writes a
   * checkpoint, and hashing the ARN and a recursive mkdir each time cost more than the write.
   */
  private readonly dirs = new Map<string, string>();
  /**
   * The size in bytes of each append-only file (journal, checkpoints) this instance has appended to
   * or rewritten: the first append to a file checks for a torn tail, later ones trust this.
   */
  private readonly appendedSize = new Map<string, number>();
  /**
   * Open descriptors (append mode) of the files this instance appends to, by path: a running
   * execution appends to its history and its checkpoints at every top-level transition, and
   * appendFileSync opens and closes the file each time (two more system calls and a path lookup
   * per append, a third of the cost of the append itself). A descriptor is closed when its
   * execution ends, when its file is replaced or removed (a rename over it would leave the
   * descriptor on the old file), past MAX_OPEN_FILES (the oldest first), and on close().
   */
  private readonly fds = new Map<string, number>();
  private readonly journal: string;
  /** Only a directory without a journal can hold the per-execution records of earlier versions. */
  private readonly legacyRecords: boolean;
  private readonly definitionsDir: string;
  /** Definition text → its hash, for the definitions written (or found) by this instance. */
  private readonly definitionHashes = new Map<string, string>();
  /** Hash → definition text, as loaded (records of one definition share the string). */
  private readonly definitionTexts = new Map<string, string>();

  /**
   * @param retention How long an ended execution's record and history are kept (default 90 days,
   *   as Step Functions keeps a Standard execution's history after it closes; 0 keeps them for
   *   good). Past it, load() drops them from the journal and removes their files. A running
   *   execution is never dropped, however old.
   */
  /** Every damaged line this instance skipped (each reported once). */
  readonly damaged: DamagedLine[] = [];
  private readonly reported = new Set<string>();
  private readonly onDamaged: (d: DamagedLine) => void;

  /**
   * A read-only store (a command that only reads runs) loads what is there and never writes: no
   * folder made, no journal compacted, no expired execution removed. What it is asked to write
   * (the command's own bookkeeping) lives in memory only, and ends with the command.
   */
  private readonly readOnly: boolean;

  constructor(
    readonly dir: string,
    private readonly retention: { readonly ms?: number; readonly now?: () => number } = {},
    options: { readonly onDamaged?: (d: DamagedLine) => void; readonly readOnly?: boolean } = {},
  ) {
    this.onDamaged = options.onDamaged ?? warnDamaged;
    this.readOnly = options.readOnly === true;
    this.machinesDir = join(dir, 'state-machines');
    this.executionsDir = join(dir, 'executions');
    this.definitionsDir = join(dir, 'definitions');
    this.journal = join(dir, JOURNAL);
    this.legacyRecords = !existsSync(this.journal);
    if (this.readOnly) return;
    mkdirSync(this.machinesDir, { recursive: true });
    mkdirSync(this.executionsDir, { recursive: true });
    mkdirSync(this.definitionsDir, { recursive: true });
  }

  load(): StoreSnapshot {
    const stateMachines: StateMachineRecord[] = [];
    for (const f of existsSync(this.machinesDir) ? readdirSync(this.machinesDir) : []) {
      if (!f.endsWith('.json')) continue;
      const file = join(this.machinesDir, f);
      const r = readJson<StateMachineRecord>(file);
      if (r && isStateMachine(r)) stateMachines.push(r);
      else if (r) this.damage({ file, line: 1, reason: 'it is not a state machine record' });
    }
    const executions = new Map<string, ExecutionRecord>();
    const stored = existsSync(this.journal) ? (this.lines(this.journal, isStoredExecution) as unknown as StoredExecution[]) : [];
    for (const line of stored) {
      const r = this.hydrate(line);
      executions.set(r.executionArn, r);
    }
    // Ended executions past the retention period: out of the journal (rewritten below), files removed.
    const keepMs = this.retention.ms ?? DEFAULT_RETENTION_MS;
    const expired: string[] = [];
    if (keepMs > 0) {
      const before = (this.retention.now ?? Date.now)() - keepMs;
      for (const r of executions.values()) {
        if (r.status !== 'RUNNING' && r.stopDate !== undefined && r.stopDate < before) expired.push(r.executionArn);
      }
      for (const arn of expired) executions.delete(arn);
    }
    // Executions an earlier version kept as executions/<key>/execution.json move into the journal.
    const moved: string[] = [];
    if (this.legacyRecords && existsSync(this.executionsDir)) {
      for (const d of readdirSync(this.executionsDir)) {
        const file = join(this.executionsDir, d, LEGACY_RECORD);
        const r = readJson<ExecutionRecord>(file);
        if (r !== undefined && !isStoredExecution(r)) this.damage({ file, line: 1, reason: 'it is not an execution record' });
        if (!r || !isStoredExecution(r) || executions.has(r.executionArn)) continue;
        executions.set(r.executionArn, r);
        moved.push(file);
      }
    }
    if (this.readOnly) return { stateMachines, executions: [...executions.values()] };
    if (moved.length > 0 || expired.length > 0 || stored.length > 2 * executions.size + 16) {
      this.rewrite(this.journal, [...executions.values()].map((r) => this.journalLine(r)).join(''));
      for (const f of moved) rmSync(f, { force: true });
    }
    // After the journal no longer lists them, so a crash in between leaves files, never a record without its history.
    for (const arn of expired) rmSync(join(this.executionsDir, key(arn)), { recursive: true, force: true });
    return { stateMachines, executions: [...executions.values()] };
  }

  putStateMachine(r: StateMachineRecord): void {
    if (this.readOnly) return;
    writeAtomic(join(this.machinesDir, `${key(r.stateMachineArn)}.json`), JSON.stringify(r));
  }

  deleteStateMachine(arn: string): void {
    if (this.readOnly) return;
    rmSync(join(this.machinesDir, `${key(arn)}.json`), { force: true });
  }

  putExecution(r: ExecutionRecord): void {
    if (this.readOnly) return;
    this.append(this.journal, this.journalLine(r));
  }

  /** The size of an append-only file; the first time, from disk, starting a new line after a torn tail. */
  private sizeOf(file: string): number {
    const known = this.appendedSize.get(file);
    if (known !== undefined) return known;
    let size = sizeEndingInNewline(file);
    if (size < 0) {
      // A crash mid-append left a torn line: the next line must not be glued to it.
      appendFileSync(file, '\n');
      size = -size + 1;
    }
    this.appendedSize.set(file, size);
    return size;
  }

  private append(file: string, line: string): void {
    const size = this.sizeOf(file);
    this.appendedSize.set(file, size + this.write(file, line));
  }

  /** Appends text to a file through its kept descriptor; the bytes written. */
  private write(file: string, text: string): number {
    const bytes = Buffer.from(text);
    let fd = this.fds.get(file);
    if (fd === undefined) {
      fd = openSync(file, 'a');
      if (this.fds.size >= MAX_OPEN_FILES) this.release(this.fds.keys().next().value!);
      this.fds.set(file, fd);
    }
    // A regular file takes the whole buffer in one write but for a full disk; loop as writeFileSync does.
    for (let off = 0; off < bytes.length;) off += writeSync(fd, bytes, off);
    return bytes.length;
  }

  /** Closes a file's kept descriptor, if any. */
  private release(file: string): void {
    const fd = this.fds.get(file);
    if (fd === undefined) return;
    this.fds.delete(file);
    closeSync(fd);
  }

  /** Closes every kept descriptor (the files stay as they are; a later append opens them again). */
  close(): void {
    for (const file of [...this.fds.keys()]) this.release(file);
  }

  /** Replaces an append-only file's content (atomically). */
  private rewrite(file: string, text: string): void {
    this.release(file);
    writeAtomic(file, text);
    this.appendedSize.set(file, Buffer.byteLength(text));
  }

  /** A record as a journal line: its definition by hash (written to definitions/ the first time). */
  private journalLine(r: ExecutionRecord): string {
    const { definition, ...rest } = r;
    return frameLine(JSON.stringify({ ...rest, definitionSha256: this.definitionHash(definition) }));
  }

  private definitionHash(text: string): string {
    let sha = this.definitionHashes.get(text);
    if (sha === undefined) {
      sha = createHash('sha256').update(text).digest('hex');
      const file = join(this.definitionsDir, `${sha}.asl.json`);
      if (!this.readOnly && !existsSync(file)) writeAtomic(file, text);
      this.definitionHashes.set(text, sha);
      this.definitionTexts.set(sha, text);
    }
    return sha;
  }

  /** A journal line as the record (a missing definition file leaves the definition empty). */
  private hydrate(stored: StoredExecution): ExecutionRecord {
    const { definitionSha256: sha, ...rest } = stored;
    if (sha === undefined) return rest as ExecutionRecord;
    let text = this.definitionTexts.get(sha);
    if (text === undefined) {
      const file = join(this.definitionsDir, `${sha}.asl.json`);
      text = existsSync(file) ? readFileSync(file, 'utf8') : '';
      this.definitionTexts.set(sha, text);
      if (text !== '') this.definitionHashes.set(text, sha);
    }
    return { ...rest, definition: text } as ExecutionRecord;
  }

  appendEvents(arn: string, events: readonly HistoryEvent[]): void {
    if (this.readOnly) return;
    if (events.length === 0) return;
    let text = '';
    for (const e of events) text += frameLine(JSON.stringify(e));
    // Through append: a crash mid-append left a torn last line that the next event must not be glued to
    // (an execution ended while dormant appends its last event without a checkpoint to truncate to).
    this.inExecDir(arn, (d) => this.append(join(d, HISTORY), text));
  }

  readEvents(arn: string): HistoryEvent[] {
    const file = join(this.execDir(arn, false), HISTORY);
    if (!existsSync(file)) return [];
    return this.lines(file, isHistoryEvent) as unknown as HistoryEvent[];
  }

  truncateEvents(arn: string, lastEventId: number): void {
    if (this.readOnly) return;
    const kept = this.readEvents(arn).filter((e) => e.id <= lastEventId);
    const text = kept.map((e) => frameLine(JSON.stringify(e))).join('');
    this.inExecDir(arn, (d) => this.rewrite(join(d, HISTORY), text));
  }

  putCheckpoint(arn: string, cp: Checkpoint | undefined): void {
    if (this.readOnly) return;
    if (cp === undefined) {
      // The execution has ended: its files take no more appends but a redrive's, which opens them again.
      const d = this.execDir(arn, false);
      this.release(join(d, HISTORY));
      this.release(join(d, CHECKPOINTS));
      removeFile(join(d, CHECKPOINTS));
      removeFile(join(d, LEGACY_CHECKPOINT));
      this.appendedSize.delete(join(d, CHECKPOINTS));
      this.appendedSize.delete(join(d, HISTORY));
      return;
    }
    const line = frameLine(JSON.stringify(cp));
    this.inExecDir(arn, (d) => {
      const file = join(d, CHECKPOINTS);
      if (this.sizeOf(file) + Buffer.byteLength(line) > MAX_CHECKPOINT_FILE) this.rewrite(file, line);
      else this.append(file, line);
    });
  }

  readCheckpoint(arn: string): Checkpoint | undefined {
    const d = this.execDir(arn, false);
    const file = join(d, CHECKPOINTS);
    if (!existsSync(file)) return readJson<Checkpoint>(join(d, LEGACY_CHECKPOINT));
    return (this.lines(file, isCheckpoint) as unknown as Checkpoint[]).at(-1);
  }

  /** A file's whole lines of the right shape; the damaged ones are reported (once) and skipped. */
  private lines<T>(file: string, isShape: (v: unknown) => v is T): T[] {
    return readLines(readFileSync(file, 'utf8'), file, isShape, (d) => this.damage(d));
  }

  private damage(d: DamagedLine): void {
    const at = `${d.file}:${d.line}`;
    if (this.reported.has(at)) return;
    this.reported.add(at);
    this.damaged.push(d);
    this.onDamaged(d);
  }

  private execDir(arn: string, create: boolean): string {
    const known = this.dirs.get(arn);
    if (known !== undefined) return known;
    const d = join(this.executionsDir, key(arn));
    if (!create) return d;
    // executions/ exists (the constructor made it), so one mkdir, not a recursive walk (EEXIST: an
    // execution resumed or redriven).
    try {
      mkdirSync(d);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') mkdirSync(d, { recursive: true });
      else if (code !== 'EEXIST') throw e;
    }
    this.dirs.set(arn, d);
    return d;
  }

  /**
   * Writes into the execution's directory, recreating it if it was removed under a known ARN (and
   * found so at the next open: a file already open takes its appends while its descriptor lasts).
   */
  private inExecDir(arn: string, write: (dir: string) => void): void {
    try {
      write(this.execDir(arn, true));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || !this.dirs.delete(arn)) throw e;
      write(this.execDir(arn, true));
    }
  }
}

/** A journal line: the record with its definition replaced by the definition's hash. */
type StoredExecution = Omit<ExecutionRecord, 'definition'> & { readonly definition?: string; readonly definitionSha256?: string };

const JOURNAL = 'executions.ndjson';
const HISTORY = 'history.ndjson';
/**
 * At most this many descriptors kept open: the executions in flight at once, with room to spare
 * under the usual limit of 1,024 a process (executions waiting for an approval keep theirs).
 */
const MAX_OPEN_FILES = 128;
/** Step Functions keeps a Standard execution's history for 90 days after it closes. */
const DEFAULT_RETENTION_MS = 90 * 24 * 3600 * 1000;
/** The per-execution record file of earlier versions, moved into the journal on load. */
const LEGACY_RECORD = 'execution.json';
const CHECKPOINTS = 'checkpoints.ndjson';
/** The single-checkpoint file of earlier versions, read when an execution has no checkpoints file. */
const LEGACY_CHECKPOINT = 'checkpoint.json';
/** Past this size (bytes) the checkpoint file is rewritten with its last checkpoint alone. */
const MAX_CHECKPOINT_FILE = 1 << 20;

/** A file-system-safe, collision-free name for an ARN: a readable tail plus a hash. */
function key(arn: string): string {
  const tail = arn
    .split(':')
    .slice(-2)
    .join('_')
    .replace(/[^A-Za-z0-9_.-]/g, '_')
    .slice(0, 60);
  return `${tail}-${createHash('sha256').update(arn).digest('hex').slice(0, 16)}`;
}

/** Removes a file if it is there: one unlink (rmSync with force looks the path up first, every time). */
function removeFile(file: string): void {
  try {
    unlinkSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

let tmpCounter = 0;
function writeAtomic(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.${++tmpCounter}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

/** A state machine record's identity and definition, as a file of state-machines/ must hold. */
function isStateMachine(r: unknown): r is StateMachineRecord {
  const v = r as Record<string, unknown>;
  return (
    v !== null &&
    typeof v === 'object' &&
    typeof v.stateMachineArn === 'string' &&
    typeof v.name === 'string' &&
    typeof v.definition === 'string'
  );
}

/** The default report of a damaged line: a warning on stderr, which names the file and line. */
function warnDamaged(d: DamagedLine): void {
  process.stderr.write(`warning: ${d.file}:${d.line}: skipped a damaged engine record (${d.reason}); the other records are kept\n`);
}

/** The file's size in bytes (0 when missing), negated when it does not end with a newline. */
function sizeEndingInNewline(file: string): number {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return 0;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return 0;
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    return last[0] === 0x0a ? size : -size;
  } finally {
    closeSync(fd);
  }
}

function readJson<T>(file: string): T | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}
