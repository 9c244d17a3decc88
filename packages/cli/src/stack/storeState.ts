import { readdirSync } from 'node:fs';

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
  if (data.includes('CURRENT')) return { kind: 'present' };
  const shown = data.sort().slice(0, 5).join(', ') + (data.length > 5 ? `, … (${data.length} files)` : '');
  return { kind: 'damaged', reason: `its CURRENT file is missing, while store files are there (${shown})` };
}
