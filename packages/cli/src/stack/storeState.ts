import { closeSync, fstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';

/** What is on disk where dynalite keeps its LevelDB store. */
export type StoreState =
  | { readonly kind: 'absent' }
  | { readonly kind: 'present' }
  | { readonly kind: 'damaged'; readonly reason: string };

/**
 * LevelDB's own bookkeeping, which says nothing about whether a store holds data: the lock, the
 * info logs. A directory holding only these (or nothing) has no store in it yet.
 */
const NOT_DATA = /^(LOCK|LOG|LOG\.old)$/;

/**
 * Reads the store directory without opening it. LevelDB asked to open a directory with no
 * `CURRENT` file creates a new, empty store there and then deletes every table file it does not
 * know as obsolete: all the runs. So a directory with data files but no `CURRENT` is never handed
 * to LevelDB; it is `damaged`, and left as it is.
 */
export function storeState(path: string): StoreState {
  let entries: string[];
  try {
    entries = readdirSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
    throw e;
  }
  const data = entries.filter((f) => !NOT_DATA.test(f));
  if (data.length === 0) return { kind: 'absent' };
  if (data.includes('CURRENT')) {
    // A table file cut short (or overwritten at its end) has lost the footer LevelDB finds its
    // index by: LevelDB would open the store anyway (it reads tables only when asked for a key)
    // and rewrite its log and manifest first, so it is caught here, with nothing opened.
    const cut = data.filter((f) => f.endsWith('.ldb') && !hasTableFooter(join(path, f)));
    if (cut.length > 0) return { kind: 'damaged', reason: `table file${cut.length > 1 ? 's' : ''} ${cut.join(', ')} ${cut.length > 1 ? 'are' : 'is'} cut short or overwritten (no LevelDB table footer)` };
    return { kind: 'present' };
  }
  const shown = data.sort().slice(0, 5).join(', ') + (data.length > 5 ? `, … (${data.length} files)` : '');
  return { kind: 'damaged', reason: `its CURRENT file is missing, while store files are there (${shown})` };
}

/** LevelDB's table magic number, the last 8 bytes of every table file (little-endian 0xdb4775248b80fb57). */
const TABLE_MAGIC = Buffer.from([0x57, 0xfb, 0x80, 0x8b, 0x24, 0x75, 0x47, 0xdb]);
/** A table's footer: two block handles (padded to 40 bytes) and the magic number. */
const FOOTER_BYTES = 48;

/** Whether a table file ends with LevelDB's footer (a file that cannot be read counts as not). */
function hasTableFooter(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const size = fstatSync(fd).size;
    if (size < FOOTER_BYTES) return false;
    const tail = Buffer.alloc(TABLE_MAGIC.length);
    readSync(fd, tail, 0, tail.length, size - tail.length);
    return tail.equals(TABLE_MAGIC);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
