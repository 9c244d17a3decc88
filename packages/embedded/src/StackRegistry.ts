import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { ensureDirectory } from './ensureDirectory.js';
import type { LoopbackCredentials } from './loopbackRequestGuard.js';

/** Where a running embedded stack can be reached; written to `.stepforge/stack.json` by its owner. */
export interface StackEndpoints {
  readonly pid: number;
  readonly startedAt: string;
  readonly dynamodbEndpoint: string;
  readonly sqsEndpoint: string;
  /** The engine's Step Functions API endpoint. */
  readonly sfnEndpoint: string;
  /** The Stepforge HTTP API (only when started by `stepforge serve`). */
  readonly apiUrl?: string;
  /** The owner's generation (RuntimeConfig.leaseEpoch), for the leases of connected processes. */
  readonly leaseEpoch?: number;
  /**
   * The stack's secret: every loopback service refuses a request not SigV4-signed with it. Only
   * the project's owner can read it (stack.json is 0600 in a 0700 `.stepforge/`).
   */
  readonly credentials: LoopbackCredentials;
  /** The bearer token of serve's HTTP API (`Authorization: Bearer <apiToken>`). */
  readonly apiToken: string;
  /** A random id of this stack, which its DynamoDB endpoint also answers: proof the endpoints are still its own. */
  readonly stackId?: string;
}

/**
 * Finds or claims the project's embedded stack. dynalite's LevelDB store can be opened by one
 * process at a time, so the first command to need the stack owns it and publishes its endpoints;
 * every other command (e.g. `approvals approve` while `run` waits for that approval) talks to it
 * over loopback instead of opening the store a second time.
 */
export class StackRegistry {
  readonly file: string;
  private readonly lockFile: string;

  constructor(readonly dataDir: string) {
    this.file = join(dataDir, 'stack.json');
    this.lockFile = join(dataDir, 'stack.lock');
  }

  /** The endpoints of a live stack owned by another process, if there is one. */
  findLive(): StackEndpoints | undefined {
    let parsed: StackEndpoints;
    try {
      parsed = JSON.parse(readFileSync(this.file, 'utf8')) as StackEndpoints;
    } catch {
      return undefined;
    }
    if (typeof parsed.pid !== 'number' || parsed.pid === process.pid || !isAlive(parsed.pid)) return undefined;
    return parsed;
  }

  /**
   * Claims ownership with an exclusive lock file (O_EXCL: of processes claiming at once, one
   * creates it). Returns false when another live process holds it (the caller should then wait
   * for its stack.json). A lock left by a process that has ended is broken under a second
   * exclusive lock (`stack.lock.break`), so that of processes breaking it at once one does:
   * without it, one could remove the lock another had just claimed, and both would own the stack.
   */
  tryClaim(): boolean {
    ensureDirectory(
      this.dataDir,
      "the embedded stack's data directory",
      'the embedded stack keeps its runs under .stepforge/ in the project directory: move what is in the way aside, or run from a directory you can write to',
    );
    ownerOnly(this.dataDir, 0o700);
    if (createExclusive(this.lockFile)) return true;
    if (this.lockHolderAlive()) return false;
    const breakLock = `${this.lockFile}.break`;
    if (!createExclusive(breakLock)) {
      // Another process is breaking it (or one that was, ended doing so: a lock that old is its own stale lock).
      if (!staleBreakLock(breakLock)) return false;
      rmSync(breakLock, { force: true });
      if (!createExclusive(breakLock)) return false;
    }
    try {
      // Read again under the break lock: the holder may have changed since.
      if (this.lockHolderAlive()) return false;
      rmSync(this.lockFile, { force: true });
      return createExclusive(this.lockFile);
    } finally {
      rmSync(breakLock, { force: true });
    }
  }

  /** Whether the process named in the lock file is alive (a lock being written, with no pid yet, counts as alive). */
  lockHolderAlive(): boolean {
    const text = safeRead(this.lockFile);
    if (text === '') return existsSync(this.lockFile) && !olderThan(this.lockFile, BREAK_LOCK_STALE_MS);
    const holder = Number.parseInt(text, 10);
    return Number.isFinite(holder) && holder !== process.pid && isAlive(holder);
  }

  /** The pid in the lock file, if any. */
  lockHolder(): number | undefined {
    const holder = Number.parseInt(safeRead(this.lockFile), 10);
    return Number.isFinite(holder) ? holder : undefined;
  }

  /**
   * Records this process as a client of the live stack (`clients/<pid>`), so that its owner,
   * done with its own command, waits for it before closing (see attachedClients). Returns the
   * detach, which removes the record again; a client that is killed leaves a record of a pid
   * that has ended, which counts for nothing.
   */
  attach(): () => void {
    const dir = join(this.dataDir, 'clients');
    const file = join(dir, String(process.pid));
    try {
      mkdirSync(dir, { recursive: true });
      writeFileSync(file, String(process.pid));
    } catch {
      // Only a courtesy to the owner: a client that cannot say so is handed over to when the owner ends.
      return () => undefined;
    }
    return () => rmSync(file, { force: true });
  }

  /** The live processes attached to the stack as clients (records of ended ones are removed). */
  attachedClients(): number[] {
    const dir = join(this.dataDir, 'clients');
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return [];
    }
    const live: number[] = [];
    for (const name of names) {
      const pid = Number.parseInt(name, 10);
      if (!Number.isFinite(pid) || pid === process.pid) continue;
      if (isAlive(pid)) live.push(pid);
      else rmSync(join(dir, name), { force: true });
    }
    return live;
  }

  /**
   * Publishes this process's endpoints (atomically, so readers never see half a file), readable
   * by this user only: the file holds the stack's credentials and serve's token.
   */
  publish(endpoints: Omit<StackEndpoints, 'pid' | 'startedAt'>): void {
    const body: StackEndpoints = { pid: process.pid, startedAt: new Date().toISOString(), ...endpoints };
    const tmp = `${this.file}.${process.pid}.tmp`;
    // Created afresh with the mode (a leftover file would keep its own), and never readable by others meanwhile.
    rmSync(tmp, { force: true });
    writeFileSync(tmp, JSON.stringify(body, null, 2), { mode: 0o600, flag: 'wx' });
    ownerOnly(tmp, 0o600);
    renameSync(tmp, this.file);
  }

  /**
   * Drops a claim found stale (stack.json names endpoints that are no longer its stack's, though
   * its pid is alive, having gone to another process): the file if it is still that claim, and
   * the lock if that pid still holds it. Claims made since (another process's) are left alone.
   */
  discardStale(stale: StackEndpoints): void {
    try {
      const current = JSON.parse(readFileSync(this.file, 'utf8')) as StackEndpoints;
      if (current.pid === stale.pid && current.stackId === stale.stackId) rmSync(this.file, { force: true });
    } catch {
      // already gone
    }
    if (Number.parseInt(safeRead(this.lockFile), 10) === stale.pid) rmSync(this.lockFile, { force: true });
  }

  /** Gives up ownership: removes stack.json (if ours) and the lock. */
  release(): void {
    try {
      const current = JSON.parse(readFileSync(this.file, 'utf8')) as StackEndpoints;
      if (current.pid === process.pid) rmSync(this.file, { force: true });
    } catch {
      // nothing published
    }
    if (Number.parseInt(safeRead(this.lockFile), 10) === process.pid) rmSync(this.lockFile, { force: true });
  }
}

/** Creates `file` holding this process's pid, only if it does not exist (O_EXCL); false when it does. */
function createExclusive(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    writeSync(fd, String(process.pid));
  } finally {
    closeSync(fd);
  }
  return true;
}

/** How long a break lock may be held (breaking a lock takes a millisecond or so), or a lock stay without its pid. */
const BREAK_LOCK_STALE_MS = 10_000;

/** A break lock whose process has ended and that is old enough that nobody is breaking with it. */
function staleBreakLock(file: string): boolean {
  const holder = Number.parseInt(safeRead(file), 10);
  if (Number.isFinite(holder) && isAlive(holder)) return false;
  return olderThan(file, BREAK_LOCK_STALE_MS);
}

function olderThan(file: string, ms: number): boolean {
  try {
    return Date.now() - statSync(file).mtimeMs > ms;
  } catch {
    return false;
  }
}

/**
 * Sets owner-only permissions (the umask may have left more). A folder made by another user is
 * not this process's to change: reading and writing in it fail on their own then.
 */
function ownerOnly(path: string, mode: number): void {
  try {
    chmodSync(path, mode);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') throw e;
  }
}

function safeRead(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
