import { chmodSync, closeSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDirectory } from '../ensureDirectory.js';
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
   * Claims ownership with an exclusive lock file. Returns false when another live process holds
   * it (the caller should then wait for its stack.json); a lock left by a dead process is taken over.
   */
  tryClaim(): boolean {
    ensureDirectory(this.dataDir, 'the embedded stack\'s data directory', 'the embedded stack keeps its runs under .stepforge/ in the project directory: move what is in the way aside, or run from a directory you can write to');
    ownerOnly(this.dataDir, 0o700);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(this.lockFile, 'wx');
        writeSync(fd, String(process.pid));
        closeSync(fd);
        return true;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        const holder = Number.parseInt(safeRead(this.lockFile), 10);
        if (Number.isFinite(holder) && holder !== process.pid && isAlive(holder)) return false;
        rmSync(this.lockFile, { force: true });
      }
    }
    return false;
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
