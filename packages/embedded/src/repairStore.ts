import { cpSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { StepforgeError } from '@stepforge/compiler';
import { StackRegistry } from './StackRegistry.js';
import { storeState } from './storeState.js';

const require = createRequire(import.meta.url);

/** What repairing did: where the untouched copy is, and whether there was anything to repair. */
export interface StoreRepair {
  readonly store: string;
  readonly copy?: string;
  readonly state: 'absent' | 'present' | 'damaged';
}

/** LevelDB as dynalite loads it (classic-level in Node), for its RepairDB. */
interface LevelModule {
  readonly Level: {
    repair(location: string): Promise<void>;
    new (location: string, options: Record<string, unknown>): { open(): Promise<void>; close(): Promise<void> };
  };
}

/**
 * Repairs the project's run store in place with LevelDB's RepairDB (which rebuilds the store's
 * index from the table and log files it finds, and moves what it cannot read into `lost/` rather
 * than deleting it), after copying the directory as it was to `.stepforge/dynamodb.damaged-<time>`.
 * Refused while a stack holds the store: repairing it under a live process would damage it.
 */
export async function repairStore(projectDir: string, now = new Date()): Promise<StoreRepair> {
  const dataDir = join(projectDir, '.stepforge');
  const store = join(dataDir, 'dynamodb');
  const state = storeState(store);
  if (state.kind === 'absent') return { store, state: 'absent' };
  const live = new StackRegistry(dataDir).findLive();
  if (live !== undefined) {
    throw new StepforgeError('store_in_use', `stepforge process ${live.pid} holds this project's stack, and with it ${store}`, {
      hint: 'end that process (or let it end), then run stepforge store repair again',
    });
  }
  let copy = `${store}.damaged-${now.toISOString().replace(/[:.]/g, '-')}`;
  for (let n = 2; existsSync(copy); n++) copy = `${store}.damaged-${now.toISOString().replace(/[:.]/g, '-')}-${n}`;
  cpSync(store, copy, { recursive: true, errorOnExist: true });
  const { Level } = createRequire(require.resolve('dynalite'))('level') as LevelModule;
  try {
    await Level.repair(store);
    // Repaired is what opens again, as the stack will open it (never created anew).
    const db = new Level(store, { createIfMissing: false });
    await db.open();
    await db.close();
  } catch (e) {
    const reason = (e as { cause?: { message?: string } }).cause?.message ?? (e as Error).message;
    throw new StepforgeError('store_damaged', `the run store in ${store} could not be repaired: ${reason}`, {
      hint: `the store as it was is kept in ${copy}; restore .stepforge/dynamodb from a backup if you have one`,
    });
  }
  return { store, copy, state: state.kind };
}
