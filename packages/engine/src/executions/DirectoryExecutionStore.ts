import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmdirSync,
  rmSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Checkpoint, HistoryEvent } from '../interpreter/types.js';
import type { ExecutionRecord, ExecutionStore, StateMachineRecord, StoreSnapshot } from './ExecutionStore.js';
import {
  frameLine,
  isCheckpoint,
  isCheckpointJson,
  isCheckpointLine,
  isHistoryEvent,
  isStoredExecution,
  lineJson,
  readLines,
  scanLines,
  type DamagedLine,
} from './journalLines.js';
import { SpareFiles } from './SpareFiles.js';

/**
 * An ExecutionStore in a directory of JSON files, so a restarted server loses nothing:
 *
 * ```
 * <dir>/state-machines/<key>.json       one record per state machine
 * <dir>/executions.ndjson               execution records, appended; the last line per ARN counts
 * <dir>/definitions/<sha256>.asl.json   each definition an execution runs, once
 * <dir>/histories/<key>.ndjson          an execution's history events and checkpoints, one per line, appended
 * ```
 *
 * State machine records are written to a temporary file and renamed over the old one, so a crash
 * leaves either the old or the new version. Everything an execution writes is appended: a rename
 * over an existing file costs about as much as a data flush on ext4 (auto_da_alloc), measured at
 * ~0.4 ms each, and a running execution writes its record twice and a checkpoint at every
 * transition; and one journal of records, whose lines carry a definition's hash rather than its
 * text, is one file to read at start-up where a file per execution cost ~0.2 ms each (3,000 runs
 * added 0.6 s to every start).
 *
 * An execution's history file holds its events and, as lines of their own, its checkpoints
 * (`{"checkpoint":{…}}`, the last one counting) and the mark of its end (`{"checkpoint":null}`): a
 * completed transition is one append of its events and its checkpoint, and an execution is one file
 * created, where a folder with a history file and a checkpoint file cost a mkdir, two creates and,
 * at the end, two removes, each a metadata change the file system journals. A resume reads the
 * history anyway; the events' reader skips checkpoint lines unparsed. Once the checkpoints appended
 * since the file was last written whole outgrow both 1 MiB and the rest of the file, the file is
 * rewritten with its last checkpoint alone (so a long loop over a large state does not keep every
 * copy of it, and the rewrites cost at most twice what was appended).
 *
 * A torn last line (a crash mid-append) is ignored on read in every file, and the next append starts
 * a line of its own; events past the checkpoint are dropped on resume. The journal is rewritten with
 * the last record per execution once it holds half as many lines again (each execution writes two
 * at least, its start and its end: a journal never rewritten holds twice as many as it needs, and
 * every start reads them all). Ended executions past the retention period (90 days by default)
 * leave the journal and their files on load.
 *
 * What earlier versions wrote is still read: `executions/<key>/history.ndjson` with
 * `checkpoints.ndjson` (or `checkpoint.json`) beside it, and the per-execution records
 * `executions/<key>/execution.json`. A store that may write moves them on load: records into the
 * journal (when it has none yet), each history with its last checkpoint into its history file
 * (written whole, then the old files removed, so a crash in between leaves both, and the next load
 * removes the old ones); a read-only store reads them where they are.
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
  private readonly historiesDir: string;
  /** Where earlier versions kept a folder per execution (`executions/<key>/`). */
  private readonly legacyDir: string;
  /** Whether that folder was there (reads fall back to it until a load has moved what it held). */
  private legacyFolders: boolean;
  /** History files by ARN, once named: every top-level transition appends to one, and hashing the ARN each time cost more than the write. */
  private readonly files = new Map<string, string>();
  /**
   * The size in bytes of each append-only file (journal, histories) this instance has appended to
   * or rewritten: the first append to a file checks for a torn tail, later ones trust this.
   */
  private readonly appendedSize = new Map<string, number>();
  /** Bytes of checkpoint lines this instance appended to each history file since it was last written whole. */
  private readonly checkpointBytes = new Map<string, number>();
  /** The last checkpoint line of each history file this instance wrote one to: what the next one's changes are taken against. */
  private readonly lastCheckpoint = new Map<string, LastCheckpoint>();
  /**
   * Open descriptors (append mode) of the files this instance appends to, by path: a running
   * execution appends to its history at every top-level transition, and appendFileSync opens and
   * closes the file each time (two more system calls and a path lookup per append, a third of the
   * cost of the append itself). A descriptor is closed when its execution ends, when its file is
   * replaced (a rename over it would leave the descriptor on the old file), past MAX_OPEN_FILES (the
   * oldest first), and on close().
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

  /** Every damaged line this instance skipped (each reported once). */
  readonly damaged: DamagedLine[] = [];
  private readonly reported = new Set<string>();
  private readonly onDamaged: (d: DamagedLine) => void;

  /**
   * A read-only store (a command that only reads runs) loads what is there and never writes: no
   * folder made, no journal compacted, no expired execution removed, nothing of an earlier version
   * moved. What it is asked to write (the command's own bookkeeping) lives in memory only, and ends
   * with the command.
   */
  private readonly readOnly: boolean;
  /** Empty files made ahead, each renamed to a new execution's history file (SpareFiles.ts); none without the option. */
  private readonly spares: SpareFiles | undefined;

  /**
   * @param retention How long an ended execution's record and history are kept (default 90 days,
   *   as Step Functions keeps a Standard execution's history after it closes; 0 keeps them for
   *   good). Past it, load() drops them from the journal and removes their files. A running
   *   execution is never dropped, however old.
   */
  constructor(
    readonly dir: string,
    private readonly retention: { readonly ms?: number; readonly now?: () => number } = {},
    options: {
      readonly onDamaged?: (d: DamagedLine) => void;
      readonly readOnly?: boolean;
      /** How many empty history files to keep made ahead (`spares/`, see SpareFiles.ts); 0, the default: none. */
      readonly spareFiles?: number;
    } = {},
  ) {
    this.onDamaged = options.onDamaged ?? warnDamaged;
    this.readOnly = options.readOnly === true;
    this.spares = !this.readOnly && (options.spareFiles ?? 0) > 0 ? new SpareFiles(join(dir, SPARES), options.spareFiles!) : undefined;
    this.machinesDir = join(dir, 'state-machines');
    this.historiesDir = join(dir, 'histories');
    this.legacyDir = join(dir, 'executions');
    this.definitionsDir = join(dir, 'definitions');
    this.journal = join(dir, JOURNAL);
    this.legacyRecords = !existsSync(this.journal);
    this.legacyFolders = existsSync(this.legacyDir);
    if (this.readOnly) return;
    mkdirSync(this.machinesDir, { recursive: true });
    mkdirSync(this.historiesDir, { recursive: true });
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
    const stored = existsSync(this.journal) ? (this.lines(this.journal, isStoredExecution) as unknown as StoredExecution[]) : [];
    // The last line of each execution counts; only those are made records (an execution that ran
    // to its end has two lines at least, the first its start).
    const last = new Map<string, StoredExecution>();
    for (const line of stored) last.set(line.executionArn, line);
    const executions = new Map<string, ExecutionRecord>();
    for (const [arn, line] of last) executions.set(arn, this.hydrate(line));
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
    if (this.legacyRecords && this.legacyFolders) {
      for (const d of readdirSync(this.legacyDir)) {
        const file = join(this.legacyDir, d, LEGACY_RECORD);
        const r = readJson<ExecutionRecord>(file);
        if (r !== undefined && !isStoredExecution(r)) this.damage({ file, line: 1, reason: 'it is not an execution record' });
        if (!r || !isStoredExecution(r) || executions.has(r.executionArn)) continue;
        executions.set(r.executionArn, r);
        moved.push(file);
      }
    }
    if (this.readOnly) return { stateMachines, executions: [...executions.values()] };
    if (moved.length > 0 || expired.length > 0 || 2 * stored.length > 3 * executions.size + 32) {
      this.rewrite(this.journal, [...executions.values()].map((r) => this.journalLine(r)).join(''));
      for (const f of moved) rmSync(f, { force: true });
    }
    // After the journal no longer lists them, so a crash in between leaves files, never a record without its history.
    for (const arn of expired) {
      removeFile(this.historyFile(arn));
      this.files.delete(arn);
      if (this.legacyFolders) rmSync(join(this.legacyDir, key(arn)), { recursive: true, force: true });
    }
    if (this.legacyFolders) this.moveLegacyHistories();
    this.spares?.adopt();
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

  /** Appends a line (or lines) to an append-only file, after a newline if a crash left its last line torn. */
  private append(file: string, text: string): void {
    const bytes = Buffer.from(text);
    let fd = this.fds.get(file);
    if (fd === undefined) {
      // Read and append through one descriptor: its size, and last byte, say whether a torn line ends the file.
      fd = openSync(file, 'a+');
      if (this.fds.size >= MAX_OPEN_FILES) this.release(this.fds.keys().next().value!);
      this.fds.set(file, fd);
    }
    let size = this.appendedSize.get(file);
    if (size === undefined) {
      size = fstatSync(fd).size;
      if (size > 0 && !endsWithNewline(fd, size)) {
        // A crash mid-append left a torn line: the next line must not be glued to it.
        writeAll(fd, NEWLINE);
        size++;
      }
    }
    writeAll(fd, bytes);
    this.appendedSize.set(file, size + bytes.length);
  }

  /** Resolves once the spare history files being made are ready (SpareFiles.ts). */
  sparesSettled(): Promise<void> {
    return this.spares?.settled() ?? Promise.resolve();
  }

  /** Makes a spare (SpareFiles.ts) the file `file`, which does not exist, when one is ready: empty, so appends need not check its tail. */
  private useSpare(file: string): void {
    const fd = this.spares!.takeAs(file);
    if (fd === undefined) return;
    this.appendedSize.set(file, 0);
    if (fd === null) return;
    if (this.fds.size >= MAX_OPEN_FILES) this.release(this.fds.keys().next().value!);
    this.fds.set(file, fd);
  }

  /** Closes a file's kept descriptor, if any; the next append, opening it again, checks its tail again. */
  private release(file: string): void {
    const fd = this.fds.get(file);
    if (fd === undefined) return;
    this.fds.delete(file);
    this.appendedSize.delete(file);
    closeSync(fd);
  }

  /**
   * Closes every kept descriptor (the files stay as they are; a later append opens them again) and
   * stops making spares: resolves once the spares being made are (so the folder can go).
   */
  close(): Promise<void> {
    for (const file of [...this.fds.keys()]) this.release(file);
    return this.spares?.stop() ?? Promise.resolve();
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
    // Through append: a crash mid-append left a torn last line that the next event must not be glued to
    // (an execution ended while dormant appends its last event without a checkpoint to truncate to).
    this.appendHistory(arn, eventLines(events), 0);
  }

  appendCheckpoint(arn: string, events: readonly HistoryEvent[], cp: Checkpoint): void {
    if (this.readOnly) return;
    const file = this.historyFile(arn);
    const line = this.checkpointLineAfter(file, cp);
    this.appendHistory(arn, eventLines(events) + line, Buffer.byteLength(line), cp);
  }

  /**
   * A checkpoint as the next line of a file: its variables whole, or (after a checkpoint this
   * instance wrote to it) only what changed in them. The top-level variables are a frozen object
   * shared until the next Assign (Scope.ownValues), and each value is replaced, never changed in
   * place, so a change is a value that is not the same object. Whole variables are written again
   * once the changes since the last whole ones outgrow them, so a reader applies at most about as
   * much as one whole checkpoint; a run that assigns a variable at every step writes each value
   * once or twice, not once a step.
   */
  private checkpointLineAfter(file: string, cp: Checkpoint): string {
    const last = this.lastCheckpoint.get(file);
    if (last !== undefined) {
      const { variables, ...rest } = cp;
      const set: Record<string, unknown> = {};
      const unset: string[] = [];
      if (variables !== last.variables) {
        for (const k of Object.keys(variables)) if (!(k in last.variables) || last.variables[k] !== variables[k]) set[k] = variables[k];
        for (const k of Object.keys(last.variables)) if (!(k in variables)) unset.push(k);
      }
      const line = frameLine(JSON.stringify({ checkpoint: rest, ...(unset.length > 0 ? { set, unset } : { set }) }));
      const changes = last.changes + Buffer.byteLength(line);
      if (changes <= last.whole) {
        this.lastCheckpoint.set(file, { variables, whole: last.whole, changes });
        return line;
      }
    }
    const line = checkpointLine(cp);
    this.lastCheckpoint.set(file, { variables: cp.variables, whole: Buffer.byteLength(line), changes: 0 });
    return line;
  }

  putCheckpoint(arn: string, cp: Checkpoint | undefined): void {
    if (this.readOnly) return;
    if (cp !== undefined) {
      this.appendCheckpoint(arn, [], cp);
      return;
    }
    // The execution has ended: its file takes no more appends but a redrive's, which opens it again.
    // The mark goes after its record's last line, so a crash before it leaves the record ended, and
    // a checkpoint that counts for no one.
    const file = this.historyFile(arn);
    if (this.fds.has(file) || existsSync(file)) this.appendHistory(arn, ENDED_LINE, 0);
    this.release(file);
    this.checkpointBytes.delete(file);
    this.lastCheckpoint.delete(file);
    this.files.delete(arn);
  }

  /**
   * Appends to an execution's history file (its last `checkpoint` bytes the line of `cp`), making
   * histories/ again if it is gone.
   */
  private appendHistory(arn: string, text: string, checkpoint: number, cp?: Checkpoint): void {
    const file = this.historyFile(arn);
    // A new execution's file: a spare renamed to it, when one is ready, rather than a create here.
    if (this.spares !== undefined && !this.fds.has(file) && !existsSync(file)) this.useSpare(file);
    try {
      this.append(file, text);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      mkdirSync(this.historiesDir, { recursive: true });
      this.append(file, text);
    }
    if (cp === undefined) return;
    const since = (this.checkpointBytes.get(file) ?? 0) + checkpoint;
    if (since > Math.max(CHECKPOINT_REWRITE_BYTES, this.appendedSize.get(file)! - since)) this.dropOldCheckpoints(file, cp);
    else this.checkpointBytes.set(file, since);
  }

  /** Rewrites a history file with its events and `cp`, the checkpoint just appended, whole: the earlier ones are never read again. */
  private dropOldCheckpoints(file: string, cp: Checkpoint): void {
    let text = '';
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (line !== '' && !isCheckpointJson(lineJson(line))) text += `${line}\n`;
    }
    this.rewriteHistory(file, text, cp);
  }

  /** Replaces a history file with `events` (its lines) and, whole, the checkpoint they lead up to. */
  private rewriteHistory(file: string, events: string, cp: Checkpoint | undefined): void {
    const line = cp === undefined ? '' : checkpointLine(cp);
    try {
      this.rewrite(file, events + line);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      mkdirSync(this.historiesDir, { recursive: true });
      this.rewrite(file, events + line);
    }
    this.checkpointBytes.delete(file);
    if (cp === undefined) this.lastCheckpoint.delete(file);
    else this.lastCheckpoint.set(file, { variables: cp.variables, whole: Buffer.byteLength(line), changes: 0 });
  }

  readEvents(arn: string): HistoryEvent[] {
    const found = this.historyText(arn);
    if (found === undefined) return [];
    return readLines(found.text, found.file, isHistoryEvent, (d) => this.damage(d), isCheckpointJson) as unknown as HistoryEvent[];
  }

  truncateEvents(arn: string, lastEventId: number): void {
    if (this.readOnly) return;
    const cp = this.readCheckpoint(arn);
    const events = eventLines(this.readEvents(arn).filter((e) => e.id <= lastEventId));
    // The checkpoint the events lead up to stays (whole): a crash before the next one resumes from it again.
    this.rewriteHistory(this.historyFile(arn), events, cp !== undefined && cp.eventCounter <= lastEventId ? cp : undefined);
  }

  readCheckpoint(arn: string): Checkpoint | undefined {
    const found = this.historyText(arn);
    if (found === undefined) return undefined;
    if (found.legacy !== undefined) return this.legacyCheckpoint(found.legacy);
    // The last checkpoint, its variables put together from the last whole ones and the changes
    // after them. A damaged line may have been a change: the changes after it, up to the next whole
    // checkpoint, cannot be applied, and the checkpoint before it is where to resume.
    const at: { current?: Checkpoint; broken: boolean } = { broken: false };
    scanLines(
      found.text,
      found.file,
      (v) => {
        if (!isCheckpointLine(v)) return false;
        // Whole (with its variables), or its variables as changes (without them).
        const cp = v.checkpoint as (Omit<Checkpoint, 'variables'> & { variables?: Checkpoint['variables'] }) | null;
        if (cp === null) {
          at.current = undefined;
          at.broken = false;
        } else if (cp.variables !== undefined) {
          at.current = cp as Checkpoint;
          at.broken = false;
        } else if (at.current !== undefined && !at.broken) {
          const variables = { ...at.current.variables, ...v.set };
          for (const k of v.unset ?? []) delete variables[k];
          at.current = { ...cp, variables };
        } else {
          // Changes with nothing whole to apply them to (after a damaged line, or after the end).
          at.broken = true;
        }
        return true;
      },
      (d) => {
        at.broken = true;
        this.damage(d);
      },
      (json) => !isCheckpointJson(json),
    );
    return at.current;
  }

  /** An execution's history file. */
  private historyFile(arn: string): string {
    let file = this.files.get(arn);
    if (file === undefined) {
      file = join(this.historiesDir, `${key(arn)}.ndjson`);
      this.files.set(arn, file);
    }
    return file;
  }

  /**
   * The text of an execution's history file; where there is none, that of an earlier version's
   * `executions/<key>/history.ndjson` (with `legacy`, its folder, where its checkpoints are).
   */
  private historyText(arn: string): { file: string; text: string; legacy?: string } | undefined {
    const file = this.historyFile(arn);
    const text = readIfThere(file);
    if (text !== undefined || !this.legacyFolders) return text === undefined ? undefined : { file, text };
    const legacy = join(this.legacyDir, key(arn));
    const old = join(legacy, LEGACY_HISTORY);
    const oldText = readIfThere(old);
    if (oldText !== undefined || existsSync(legacy)) return { file: old, text: oldText ?? '', legacy };
    // Moved by the store that writes, between the two reads.
    const moved = readIfThere(file);
    return moved === undefined ? undefined : { file, text: moved };
  }

  /** The checkpoint an earlier version kept in an execution's folder: the last line of checkpoints.ndjson, or checkpoint.json. */
  private legacyCheckpoint(folder: string): Checkpoint | undefined {
    const file = join(folder, LEGACY_CHECKPOINTS);
    if (!existsSync(file)) return readJson<Checkpoint>(join(folder, LEGACY_CHECKPOINT));
    return (this.lines(file, isCheckpoint) as unknown as Checkpoint[]).at(-1);
  }

  /**
   * Moves each execution folder of an earlier version into a history file: its whole history lines
   * and, after them, its last checkpoint. The file is written whole before the old ones go, so a
   * crash in between leaves both, and the next load, finding the new file, removes the old ones.
   * A folder left holding anything else (a damaged execution.json) stays, as does executions/.
   */
  private moveLegacyHistories(): void {
    for (const entry of readdirSync(this.legacyDir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const folder = join(this.legacyDir, entry.name);
      const file = join(this.historiesDir, `${entry.name}.ndjson`);
      if (!existsSync(file)) {
        const history = readIfThere(join(folder, LEGACY_HISTORY)) ?? '';
        const cp = this.legacyCheckpoint(folder);
        // A torn last line was never whole: it is left behind rather than made a damaged line in the middle.
        const text = history.slice(0, history.lastIndexOf('\n') + 1) + (cp === undefined ? '' : checkpointLine(cp));
        if (text !== '') writeAtomic(file, text);
      }
      for (const f of readdirSync(folder)) {
        if (f === LEGACY_HISTORY || f === LEGACY_CHECKPOINTS || f === LEGACY_CHECKPOINT || f.endsWith('.tmp')) removeFile(join(folder, f));
      }
      removeEmptyFolder(folder);
    }
    if (removeEmptyFolder(this.legacyDir)) this.legacyFolders = false;
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
}

/** A journal line: the record with its definition replaced by the definition's hash. */
type StoredExecution = Omit<ExecutionRecord, 'definition'> & { readonly definition?: string; readonly definitionSha256?: string };

const JOURNAL = 'executions.ndjson';
/** The folder of empty files made ahead for new histories (SpareFiles.ts). */
const SPARES = 'spares';
/**
 * At most this many descriptors kept open: the executions in flight at once, with room to spare
 * under the usual limit of 1,024 a process (executions waiting for an approval keep theirs).
 */
const MAX_OPEN_FILES = 128;
/** Step Functions keeps a Standard execution's history for 90 days after it closes. */
const DEFAULT_RETENTION_MS = 90 * 24 * 3600 * 1000;
/** The per-execution record file of earlier versions, moved into the journal on load. */
const LEGACY_RECORD = 'execution.json';
/** An earlier version's history file, in the execution's folder. */
const LEGACY_HISTORY = 'history.ndjson';
/** An earlier version's checkpoint file, in the execution's folder: appended, the last line counting. */
const LEGACY_CHECKPOINTS = 'checkpoints.ndjson';
/** The single-checkpoint file of still earlier versions, read when an execution has no checkpoints file. */
const LEGACY_CHECKPOINT = 'checkpoint.json';
/** Checkpoint lines appended past this many bytes (and past the rest of the file) leave only the last one. */
const CHECKPOINT_REWRITE_BYTES = 1 << 20;
const NEWLINE = Buffer.from('\n');
/** The history line that marks an execution's end: no checkpoint counts until the next one. */
const ENDED_LINE = frameLine(JSON.stringify({ checkpoint: null }));

/** A history file's last checkpoint line as this instance wrote it: its variables, and the bytes of its last whole line and of the changes since. */
interface LastCheckpoint {
  readonly variables: Readonly<Record<string, unknown>>;
  readonly whole: number;
  readonly changes: number;
}

/** Events as history lines. */
function eventLines(events: readonly HistoryEvent[]): string {
  let text = '';
  for (const e of events) text += frameLine(JSON.stringify(e));
  return text;
}

/** A checkpoint as a history line (see CHECKPOINT_LINE_START). */
function checkpointLine(cp: Checkpoint): string {
  return frameLine(JSON.stringify({ checkpoint: cp }));
}

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

/** Whether the file open at `fd`, `size` bytes long, ends with a newline. */
function endsWithNewline(fd: number, size: number): boolean {
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  return last[0] === 0x0a;
}

/** Writes all of a buffer: a regular file takes it in one write but for a full disk; loop as writeFileSync does. */
function writeAll(fd: number, bytes: Buffer): void {
  for (let off = 0; off < bytes.length;) off += writeSync(fd, bytes, off);
}

/** A file's text, or undefined when there is no such file (one read, no lookup first). */
function readIfThere(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** Removes a folder if it is empty; whether it is gone. */
function removeEmptyFolder(folder: string): boolean {
  try {
    rmdirSync(folder);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return true;
    if (code === 'ENOTEMPTY' || code === 'EEXIST') return false;
    throw e;
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
