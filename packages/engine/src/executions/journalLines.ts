import { crc32 } from 'node:zlib';

/**
 * The line framing of the engine's append-only files (the execution journal, and each execution's
 * history file, which holds its events and its checkpoints): `~<bytes> <crc32> <json>\n`, the JSON's length in bytes and its CRC-32 (8 hex
 * digits) before it. A line whose length or checksum does not match (a torn append, a flipped
 * byte, garbage written into the file), or whose value is not the shape its file holds, is
 * skipped and reported; the lines around it are whole and kept. Lines without the `~` (files
 * written before the framing) are read as plain JSON, and shape-checked the same way.
 */

/** One line as written. */
export function frameLine(json: string): string {
  return `~${Buffer.byteLength(json)} ${crc32(json).toString(16).padStart(8, '0')} ${json}\n`;
}

/** A line that was skipped: the file, its line number (1-based) and why. */
export interface DamagedLine {
  readonly file: string;
  readonly line: number;
  readonly reason: string;
}

const FRAME = /^~(\d+) ([0-9a-f]{8}) /;

const SKIPPED = Symbol('skipped');

/** The value of one line, or why it cannot be used, or SKIPPED when its JSON is one `skip` leaves to another reader. */
function lineValue(line: string, skip?: (json: string) => boolean): { value: unknown } | { reason: string } | typeof SKIPPED {
  let json = line;
  const m = FRAME.exec(line);
  if (m) {
    json = line.slice(m[0].length);
    if (Buffer.byteLength(json) !== Number(m[1])) return { reason: `its length is not the ${m[1]} bytes its frame says` };
    if (crc32(json).toString(16).padStart(8, '0') !== m[2]) return { reason: 'its checksum does not match' };
  } else if (line.startsWith('~')) {
    return { reason: 'its frame is damaged' };
  }
  if (skip?.(json) === true) return SKIPPED;
  try {
    return { value: JSON.parse(json) as unknown };
  } catch {
    return { reason: 'it is not JSON' };
  }
}

/**
 * The values of a file's lines that are whole and of the right shape (`isShape`), in order; each
 * other line is passed to `damaged`, except a torn last line (no newline after it: a crash
 * mid-append, expected after any crash, and not data that was ever whole). A whole line whose JSON
 * `skip` accepts is another reader's (a history file's checkpoints, to its events' reader): it is
 * checked against its frame but not parsed.
 */
export function readLines<T>(
  text: string,
  file: string,
  isShape: (v: unknown) => v is T,
  damaged: (d: DamagedLine) => void,
  skip?: (json: string) => boolean,
): T[] {
  const out: T[] = [];
  scanLines(
    text,
    file,
    (v) => {
      if (!isShape(v)) return false;
      out.push(v);
      return true;
    },
    damaged,
    skip,
  );
  return out;
}

/**
 * Goes through a file's lines in order, as readLines does: `visit` gets each whole line's value and
 * says whether it is of the right shape; a line that is not (and is not the torn last line, nor one
 * `skip` leaves to another reader) goes to `damaged`, in its place in the order.
 */
export function scanLines(
  text: string,
  file: string,
  visit: (v: unknown) => boolean,
  damaged: (d: DamagedLine) => void,
  skip?: (json: string) => boolean,
): void {
  const lines = text.split('\n');
  // The last element is either empty (the text ends with a newline) or a torn tail.
  const lastWhole = lines.length - 2;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '') continue;
    const r = lineValue(line, i <= lastWhole ? skip : undefined);
    if (r === SKIPPED) continue;
    if ('value' in r && visit(r.value)) continue;
    // The text after the last newline is the torn tail of an interrupted append.
    if (i > lastWhole) continue;
    damaged({ file, line: i + 1, reason: 'reason' in r ? r.reason : 'it is not a record of this file' });
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A line of the execution journal: a record with its identity, state machine and status. */
export function isStoredExecution(
  v: unknown,
): v is { executionArn: string; stateMachineArn: string; status: string; name: string; startDate: number } {
  return (
    isObject(v) &&
    typeof v.executionArn === 'string' &&
    typeof v.stateMachineArn === 'string' &&
    typeof v.status === 'string' &&
    typeof v.name === 'string' &&
    typeof v.startDate === 'number' &&
    (v.definitionSha256 === undefined || typeof v.definitionSha256 === 'string') &&
    (v.definition === undefined || typeof v.definition === 'string') &&
    typeof v.input === 'string'
  );
}

/** A history line: an event with its id, type and time. */
export function isHistoryEvent(v: unknown): v is { id: number; type: string; timestamp: number; previousEventId: number } {
  return (
    isObject(v) &&
    Number.isInteger(v.id) &&
    typeof v.type === 'string' &&
    typeof v.timestamp === 'number' &&
    typeof v.previousEventId === 'number'
  );
}

/**
 * How a history file's checkpoint lines begin: `{"checkpoint":{…}}` (where to resume), or
 * `{"checkpoint":null}` (the execution ended; no checkpoint counts until the next one). Events never
 * have that key, so a reader tells the two kinds apart without parsing the line. A checkpoint
 * without `variables` holds only what changed in them since the checkpoint line before it: `set`
 * (variables with a new value) and `unset` (variables gone).
 */
export const CHECKPOINT_LINE_START = '{"checkpoint":';

/** Whether a line's JSON is a checkpoint line (see CHECKPOINT_LINE_START). */
export const isCheckpointJson = (json: string): boolean => json.startsWith(CHECKPOINT_LINE_START);

/** The JSON of one line of a file as written, its frame (if any) taken off; its checksum is not checked. */
export function lineJson(line: string): string {
  const m = FRAME.exec(line);
  return m ? line.slice(m[0].length) : line;
}

/** A checkpoint line of a history file: a checkpoint (whole, or its variables as changes), or null for "ended". */
export function isCheckpointLine(v: unknown): v is { checkpoint: CheckpointShape | null; set?: Record<string, unknown>; unset?: string[] } {
  return (
    isObject(v) &&
    (v.checkpoint === null || isCheckpoint(v.checkpoint)) &&
    (v.set === undefined || isObject(v.set)) &&
    (v.unset === undefined || (Array.isArray(v.unset) && v.unset.every((k) => typeof k === 'string')))
  );
}

/** What a checkpoint is checked to hold on read. */
type CheckpointShape = { stateName: string; eventCounter: number; previousEventId: number; transitions: number; variables?: unknown };

/** A checkpoint line: where to resume (the state, the event counters). */
export function isCheckpoint(v: unknown): v is CheckpointShape {
  return (
    isObject(v) &&
    typeof v.stateName === 'string' &&
    Number.isInteger(v.eventCounter) &&
    typeof v.previousEventId === 'number' &&
    typeof v.transitions === 'number' &&
    isObject(v.variables ?? {})
  );
}
