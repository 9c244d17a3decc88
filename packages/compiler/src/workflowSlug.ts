// The workflow name machines use, derived from the display name people write (`document.name:
// Document analysis`). Step Functions state machine names are 1–80 characters, and a state machine
// that logs to CloudWatch may use only ASCII letters, digits, '-' and '_'; the same name is the
// compiled files' base name, the run records' `workflow`, and part of CDK construct ids and log
// group names, so it is held to that narrowest set.
import { WORKFLOW_NAME_PATTERN } from './workflowNameFromFile.js';

/** The longest workflow name (Step Functions' limit on state machine names). */
export const WORKFLOW_NAME_MAX = 80;

/**
 * Letters that Unicode decomposition (NFKD) does not turn into ASCII letters plus marks, spelt as
 * they are usually written in ASCII.
 */
const TRANSLITERATION: Readonly<Record<string, string>> = {
  ß: 'ss',
  ẞ: 'SS',
  æ: 'ae',
  Æ: 'AE',
  œ: 'oe',
  Œ: 'OE',
  ø: 'o',
  Ø: 'O',
  ł: 'l',
  Ł: 'L',
  đ: 'd',
  Đ: 'D',
  ð: 'd',
  Ð: 'D',
  þ: 'th',
  Þ: 'TH',
  ı: 'i',
  ħ: 'h',
  Ħ: 'H',
  ŧ: 't',
  Ŧ: 'T',
  ĸ: 'k',
  ŋ: 'ng',
  Ŋ: 'NG',
  ſ: 's',
};
const TRANSLITERABLE = new RegExp(`[${Object.keys(TRANSLITERATION).join('')}]`, 'gu');

/**
 * The workflow name for a display name: deterministic, so every compile of a document gives its
 * state machine the same name.
 *
 * - A display name that already is a valid workflow name (`order-triage`) is kept as it is, so no
 *   existing state machine is renamed.
 * - Otherwise: diacritics are stripped and a few letters transliterated (`Café` → `Cafe`, `Straße`
 *   → `Strasse`); every run of characters other than ASCII letters, digits and '_' becomes one
 *   '-' (`Triage — EU` → `Triage-EU`); '-' is trimmed from both ends; the result is cut to 80
 *   characters (and trimmed again).
 * - When nothing is left (`日本語`, `!!!`): `workflow-` and 8 hex digits of a hash of the display
 *   name, so that two such names still get different state machines.
 */
export function workflowSlug(displayName: string): string {
  if (WORKFLOW_NAME_PATTERN.test(displayName)) return displayName;
  const ascii = displayName
    .replace(TRANSLITERABLE, (c) => TRANSLITERATION[c]!)
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '');
  const slug = ascii
    .replace(/[^A-Za-z0-9_]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, WORKFLOW_NAME_MAX)
    .replace(/-+$/, '');
  return slug === '' ? `workflow-${fnv1a(displayName)}` : slug;
}

/** FNV-1a (32 bits) of the UTF-16 code units, as 8 hex digits: small, pure and stable everywhere. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}
