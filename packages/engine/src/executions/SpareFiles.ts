import { closeSync, constants, mkdirSync, open, readdirSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Empty files made ahead of need, in a folder of their own, each taken by renaming it to the name
 * a new file should have. Creating a file is a metadata change the file system journals: on the
 * hosts measured it cost 0.3–0.5 ms of system CPU, a rename 15 µs. An execution's history is a new
 * file, so every run paid a create on the thread that runs the engine; made here, on libuv's pool,
 * while that thread goes on, a new execution costs a lookup and a rename instead.
 *
 * A spare made here stays open (read and append, as the caller appends), so taking it is a rename
 * and no open: its descriptor follows the file to its new name. Nothing is ever written to a spare
 * before it is taken, so a crash at any point leaves either an empty spare (adopted, by name, by the
 * next store that loads the folder) or the renamed file. A spare found with content on load was not
 * made here and is removed, never taken. Two processes taking one spare (a stack handed over) is
 * safe: a rename of a name happens once; the other's rename fails and it makes its own file.
 *
 * The folder holds at most `limit`, and only as many as the files taken call for (twice as many as
 * were taken, up to `limit`): a command that starts one execution makes one or two, a server under
 * load keeps `limit`.
 */
export class SpareFiles {
  /** Spares ready to take: names in the folder, with a descriptor open on each one made here. */
  private readonly ready: Spare[] = [];
  /** Creations in flight. */
  private creating = 0;
  private taken = 0;
  private stopped = false;
  /** Set after a failed creation (a full disk, a read-only folder): takes fall back to the caller's own create. */
  private failed = false;
  private madeFolder = false;
  private seq = 0;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly dir: string,
    private readonly limit: number,
  ) {}

  /** Takes the spares a previous process left in the folder (empty ones; anything else is removed). */
  adopt(): void {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e;
    }
    this.madeFolder = true;
    for (const name of names) {
      const file = join(this.dir, name);
      let size: number;
      try {
        size = statSync(file).size;
      } catch {
        continue;
      }
      if (size === 0 && name.endsWith(SUFFIX) && this.ready.length < this.limit) this.ready.push({ name });
      else unlinkQuietly(file);
    }
  }

  /**
   * Renames a spare to `file`, which the caller knows does not exist (a rename would replace it).
   * `undefined` when none is ready or the rename failed (the caller creates the file itself, as it
   * would without spares); `null` when `file` is now an empty file with no descriptor open on it; a
   * number, the descriptor open on it (read and append), the caller's to close.
   */
  takeAs(file: string): number | null | undefined {
    this.taken++;
    const spare = this.ready.pop();
    let got: number | null | undefined;
    if (spare !== undefined) {
      try {
        renameSync(join(this.dir, spare.name), file);
        got = spare.fd ?? null;
      } catch {
        // Gone (another process took it) or the target's folder is missing: the caller's create says which.
        if (spare.fd !== undefined) closeSync(spare.fd);
      }
    }
    this.refill();
    return got;
  }

  /**
   * Stops making spares and closes their descriptors; resolves once the creations in flight have
   * ended. The spares stay in the folder for the next store to adopt.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.settled();
    for (const spare of this.ready) if (spare.fd !== undefined) closeSync(spare.fd);
    this.ready.length = 0;
  }

  /** Resolves once no creation is in flight (those a creation's end starts included). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /** Starts creations up to the number wanted, at most CONCURRENCY at a time. */
  private refill(): void {
    if (this.stopped || this.failed) return;
    const wanted = Math.min(this.limit, 2 * this.taken);
    while (this.creating < CONCURRENCY && this.ready.length + this.creating < wanted) {
      this.creating++;
      const p = this.create().finally(() => {
        this.creating--;
        this.inFlight.delete(p);
        this.refill();
      });
      this.inFlight.add(p);
    }
  }

  private async create(): Promise<void> {
    const name = `${process.pid}-${Date.now().toString(36)}-${++this.seq}${SUFFIX}`;
    let fd: number;
    try {
      if (!this.madeFolder) {
        mkdirSync(this.dir, { recursive: true });
        this.madeFolder = true;
      }
      // Exclusive (a name never replaces a file), and open as the caller appends: read for a torn tail, append.
      fd = await new Promise<number>((resolve, reject) =>
        open(join(this.dir, name), CREATE_FLAGS, 0o666, (e, fd) => (e ? reject(e) : resolve(fd))),
      );
    } catch {
      this.failed = true;
      return;
    }
    // Stopped meanwhile: the spare stays for the next store, its descriptor does not.
    if (this.stopped) closeSync(fd);
    else this.ready.push({ name, fd });
  }
}

interface Spare {
  readonly name: string;
  /** Open on it (made by this instance); none for a spare adopted from the folder. */
  readonly fd?: number;
}

const SUFFIX = '.ndjson';
const CREATE_FLAGS = constants.O_CREAT | constants.O_EXCL | constants.O_RDWR | constants.O_APPEND;
/** Creations at once: a file a run, at a few hundred runs a second, on two of libuv's four pool threads at most. */
const CONCURRENCY = 2;

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Already gone.
  }
}
