import { closeSync, fstatSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';

/** What is on disk where dynalite keeps its LevelDB store. */
export type StoreState = { readonly kind: 'absent' } | { readonly kind: 'present' } | { readonly kind: 'damaged'; readonly reason: string };

/**
 * LevelDB's own bookkeeping, which says nothing about whether a store holds data: the lock, the
 * info logs. A directory holding only these (or nothing) has no store in it yet.
 */
const NOT_DATA = /^(LOCK|LOG|LOG\.old)$/;

/**
 * Reads the store directory without opening it, the way LevelDB would find its data: CURRENT
 * names the MANIFEST, whose version edits list the live table files (with their sizes) and the
 * log still to replay. Only those are checked; any other table file is an orphan LevelDB itself
 * ignores and deletes on open (the output of a compaction or flush cut off by a crash).
 *
 * What LevelDB would open while silently losing data is `damaged` here, and never handed to it:
 * no CURRENT (LevelDB would create an empty store and delete every table as obsolete), a MANIFEST
 * or log record whose checksum fails (LevelDB skips it), a log cut inside a record, a live table
 * missing, cut short or of another size than recorded (LevelDB reads tables only when a key is
 * asked for, after it has rewritten its log and manifest).
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
  if (!data.includes('CURRENT')) {
    const shown = data.sort().slice(0, 5).join(', ') + (data.length > 5 ? `, … (${data.length} files)` : '');
    return { kind: 'damaged', reason: `its CURRENT file is missing, while store files are there (${shown})` };
  }
  const reason = liveFilesDamage(path, data);
  return reason === undefined ? { kind: 'present' } : { kind: 'damaged', reason };
}

/** Why the files CURRENT leads to cannot be used as they are, or undefined when they can. */
function liveFilesDamage(path: string, entries: readonly string[]): string | undefined {
  const current = readFileSync(join(path, 'CURRENT'), 'latin1');
  const manifest = /^(MANIFEST-\d+)\n$/.exec(current)?.[1];
  if (manifest === undefined) return `its CURRENT file does not name a MANIFEST (${JSON.stringify(current.slice(0, 40))})`;
  if (!entries.includes(manifest)) return `its CURRENT file names ${manifest}, which is missing`;
  const read = readLogRecords(readFileSync(join(path, manifest)));
  if (read.damage !== undefined) return `${manifest} ${read.damage}`;
  let version: LiveVersion;
  try {
    version = replayEdits(read.records);
  } catch (e) {
    return `${manifest} ${(e as Error).message}`;
  }
  if (version.logNumber === undefined || version.nextFile === undefined || version.lastSequence === undefined) {
    return `${manifest} is incomplete (it does not record the log number, next file number and last sequence)`;
  }
  const problems: string[] = [];
  const cut: string[] = [];
  for (const [number, size] of version.files) {
    const name = tableName(number, entries);
    if (name === undefined) {
      problems.push(`table file ${fileName(number, 'ldb')} that ${manifest} lists is missing`);
      continue;
    }
    if (!hasTableFooter(join(path, name))) cut.push(name);
    else if (fileSize(join(path, name)) !== size)
      problems.push(`table file ${name} is ${fileSize(join(path, name))} bytes, not the ${size} bytes ${manifest} records (overwritten)`);
  }
  if (cut.length > 0)
    problems.unshift(
      `table file${cut.length > 1 ? 's' : ''} ${cut.join(', ')} ${cut.length > 1 ? 'are' : 'is'} cut short or overwritten (no LevelDB table footer)`,
    );
  // The log LevelDB replays on open (and any newer one): a record lost there is a write lost.
  // A store repaired by RepairDB records log number 0: it has no log to replay yet.
  if (version.logNumber > 0 && !entries.includes(fileName(version.logNumber, 'log')))
    problems.push(`log file ${fileName(version.logNumber, 'log')} that ${manifest} names is missing`);
  for (const f of entries) {
    const m = /^(\d+)\.log$/.exec(f);
    if (m === null || Number(m[1]) < version.logNumber) continue;
    const log = readLogRecords(readFileSync(join(path, f)));
    if (log.damage !== undefined) problems.push(`log file ${f} ${log.damage}`);
  }
  return problems.length > 0 ? problems.join('; ') : undefined;
}

function fileName(number: number, ext: string): string {
  return `${String(number).padStart(6, '0')}.${ext}`;
}

/** The live table's name as it is on disk (LevelDB reads the older `.sst` name too). */
function tableName(number: number, entries: readonly string[]): string | undefined {
  return [fileName(number, 'ldb'), fileName(number, 'sst')].find((n) => entries.includes(n));
}

function fileSize(file: string): number {
  const fd = openSync(file, 'r');
  try {
    return fstatSync(fd).size;
  } finally {
    closeSync(fd);
  }
}

/** LevelDB's log format (used by both the write-ahead log and the MANIFEST): 32 KiB blocks of checksummed fragments. */
const BLOCK = 32768;
const HEADER = 7;
const FULL = 1;
const FIRST = 2;
const MIDDLE = 3;
const LAST = 4;

/**
 * The logical records of a LevelDB log file, or what is wrong with it. Stricter than LevelDB,
 * which skips a fragment whose checksum fails and takes a record cut at the end as the end of
 * the file: either loses writes without a word, so either is damage here.
 */
export function readLogRecords(bytes: Buffer): { readonly records: Buffer[]; readonly damage?: string } {
  const records: Buffer[] = [];
  let pending: Buffer[] | undefined;
  let offset = 0;
  while (offset < bytes.length) {
    const left = BLOCK - (offset % BLOCK);
    if (left < HEADER) {
      // A block's trailer: too short for a header, written as zeros.
      if (bytes.subarray(offset, offset + left).some((b) => b !== 0))
        return { records, damage: `has bytes that are no record at offset ${offset}` };
      offset += left;
      continue;
    }
    if (bytes.length - offset < HEADER) return { records, damage: `is cut short inside a record header at offset ${offset}` };
    const length = bytes.readUInt16LE(offset + 4);
    const type = bytes[offset + 6]!;
    if (type === 0 && length === 0 && bytes.subarray(offset, Math.min(bytes.length, offset + left)).every((b) => b === 0)) {
      // Zeros to the end of the block (a preallocated region): nothing was written there.
      offset += left;
      continue;
    }
    if (HEADER + length > left) return { records, damage: `has a record that runs past its block at offset ${offset} (overwritten)` };
    if (offset + HEADER + length > bytes.length) return { records, damage: `is cut short inside a record at offset ${offset}` };
    const stored = bytes.readUInt32LE(offset);
    const computed = maskCrc(crc32c(bytes, offset + 6, offset + HEADER + length));
    if (stored !== computed) return { records, damage: `has a record whose checksum fails at offset ${offset} (overwritten)` };
    const payload = bytes.subarray(offset + HEADER, offset + HEADER + length);
    offset += HEADER + length;
    if (type === FULL && pending === undefined) records.push(payload);
    else if (type === FIRST && pending === undefined) pending = [payload];
    else if (type === MIDDLE && pending !== undefined) pending.push(payload);
    else if (type === LAST && pending !== undefined) {
      records.push(Buffer.concat([...pending, payload]));
      pending = undefined;
    } else return { records, damage: `has a record fragment out of order at offset ${offset - HEADER - length}` };
  }
  if (pending !== undefined) return { records, damage: 'is cut short inside a record (its last fragment is missing)' };
  return { records };
}

/** The live files of the MANIFEST's last version: table file number → size; and its counters. */
interface LiveVersion {
  readonly files: Map<number, number>;
  logNumber?: number;
  nextFile?: number;
  lastSequence?: number;
}

/** VersionEdit tags (LevelDB's db/version_edit.cc). */
const TAG = {
  comparator: 1,
  logNumber: 2,
  nextFile: 3,
  lastSequence: 4,
  compactPointer: 5,
  deletedFile: 6,
  newFile: 7,
  prevLogNumber: 9,
} as const;

/** Applies the MANIFEST's version edits in order: each adds and deletes table files. */
function replayEdits(records: readonly Buffer[]): LiveVersion {
  const version: LiveVersion = { files: new Map() };
  for (const record of records) {
    const r = new EditReader(record);
    while (!r.done()) {
      const tag = r.varint();
      switch (tag) {
        case TAG.comparator:
          r.slice();
          break;
        case TAG.logNumber:
          version.logNumber = r.varint();
          break;
        case TAG.prevLogNumber:
          r.varint();
          break;
        case TAG.nextFile:
          version.nextFile = r.varint();
          break;
        case TAG.lastSequence:
          version.lastSequence = r.varint();
          break;
        case TAG.compactPointer:
          r.varint();
          r.slice();
          break;
        case TAG.deletedFile:
          r.varint();
          version.files.delete(r.varint());
          break;
        case TAG.newFile: {
          r.varint();
          const number = r.varint();
          const size = r.varint();
          r.slice();
          r.slice();
          version.files.set(number, size);
          break;
        }
        default:
          throw new Error(`has a version edit with unknown tag ${tag}`);
      }
    }
  }
  return version;
}

class EditReader {
  private at = 0;
  constructor(private readonly bytes: Buffer) {}
  done(): boolean {
    return this.at >= this.bytes.length;
  }
  /** A varint (up to 64 bits; file numbers and sizes fit a double exactly). */
  varint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.at >= this.bytes.length) throw new Error('has a version edit cut inside a number');
      const b = this.bytes[this.at++]!;
      value += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return value;
      scale *= 128;
    }
    throw new Error('has a version edit with a malformed number');
  }
  /** A length-prefixed byte string. */
  slice(): Buffer {
    const length = this.varint();
    if (this.at + length > this.bytes.length) throw new Error('has a version edit cut inside a key');
    const s = this.bytes.subarray(this.at, this.at + length);
    this.at += length;
    return s;
  }
}

/** CRC-32C (Castagnoli), as LevelDB checksums its log records. */
const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

/**
 * The CRC-32C of `bytes[start, end)`. An indexed loop over the bytes: this runs once per command,
 * before V8 optimises anything, and an iterator loop costs its interpreter several times as much
 * (a 16 KB log took 5-10 ms of `run`'s start-up).
 */
function crc32c(bytes: Buffer, start: number, end: number): number {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** LevelDB stores a masked CRC, so that a CRC of data holding CRCs is not itself trivial. */
function maskCrc(crc: number): number {
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0;
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
