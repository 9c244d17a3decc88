import { isAlias, isMap, isScalar, isSeq, parseDocument, type Document } from 'yaml';
import { CHAIN_PARSE_OPTIONS, loadChainDocumentFast, loadChainDocumentPrecise } from './chain/loadChainDocument.js';
import type { ChainDocument } from './chain/ChainDocument.js';
import type { ContenoxDocument } from './contenox/ContenoxDocument.js';
import { isContenoxChainData, loadContenoxDocument } from './contenox/loadContenoxDocument.js';
import { parseJsonFast } from './source/parseJsonFast.js';
import type { Locator } from './source/Locator.js';
import type { DslDocument } from './dsl/DslDocument.js';
import { loadDslDocumentFast, loadDslDocumentPrecise, type LoadDslOptions, type UserFunctionsFolder } from './dsl/loadDslDocument.js';
import { PRECISE_PARSE_OPTIONS } from './source/yamlNodes.js';
import { parseFastYaml } from './source/fastYaml.js';
import { jsonErrorOffset, SourceText, StepforgeError, type Diagnostic } from '@stepforge/contract';
import type { GraphView } from './graph/GraphView.js';
import type { TierTable } from './tiers/Tier.js';
import { unsupportedYamlKeys } from './source/unsupportedYamlKey.js';
import { yamlErrorMessage } from './source/yamlErrorMessage.js';
import { yamlValueIssues } from './source/yamlValueIssues.js';

/** Options for loadDocument; each front-end uses the ones that apply to it. */
export interface LoadDocumentOptions {
  readonly file?: string;
  /** Unknown fields are errors rather than warnings. */
  readonly strict?: boolean;
  /** `topology` runs only the checks `stepforge graph` needs; `full` (default) runs them all. */
  readonly level?: 'topology' | 'full';
  readonly tiers?: TierTable;
  /** Contenox chains: values for `{{var:NAME}}` macros. */
  readonly vars?: Readonly<Record<string, string>>;
  /** Contenox chains: an unfilled macro is an error (before a run), not a warning. */
  readonly requireMacros?: boolean;
  /** Chain documents: apply the tier policy at level `full` (default true). */
  readonly tierPolicy?: boolean;
  /** DSL documents: the project's user functions folder, when known (see LoadDslOptions). */
  readonly functions?: UserFunctionsFolder;
  /** DSL documents: build the result's graph view (default true); compiling a document reads none. */
  readonly graph?: boolean;
}

/** What loadDocument produced; `format` is absent only when the text is not a YAML/JSON mapping at all. */
export interface LoadDocumentResult {
  readonly format?: 'chain' | 'dsl' | 'contenox';
  readonly document?: ChainDocument | DslDocument | ContenoxDocument;
  readonly graph?: GraphView;
  readonly errors: StepforgeError[];
  readonly warnings: Diagnostic[];
}

/**
 * Loads any Stepforge document: a mapping with a `chain:` key is a chain document, one with `steps:`
 * is a workflow DSL document, one whose `tasks` is a list of objects with `handler` a Contenox task
 * chain; anything else is an `invalid_document` error. The text is parsed once:
 * the parse that tells the format is the one the front-end uses.
 */
export function loadDocument(text: string, options: LoadDocumentOptions = {}): LoadDocumentResult {
  const source = new SourceText(text, options.file);
  const dslOptions: LoadDslOptions = {
    ...(options.file !== undefined ? { file: options.file } : {}),
    ...(options.strict !== undefined ? { strict: options.strict } : {}),
    ...(options.functions !== undefined ? { functions: options.functions } : {}),
    ...(options.graph !== undefined ? { graph: options.graph } : {}),
  };
  // The fast parse tells the format of a well-formed document and feeds that front-end's fast path;
  // a top-level `chain:` line is a cheap, reliable hint when it does not parse or the fast path declines.
  let chainLikely = sniffFormat(text) === 'chain';
  // A Contenox chain written as JSON (as Contenox writes them): JSON.parse and a lazy locator, far
  // cheaper than a YAML parse of a large chain. Other JSON documents take the YAML paths below.
  const json = parseJsonFast(text, source);
  if (json && isContenoxChainData(json.data) && !Object.prototype.hasOwnProperty.call(json.data, 'chain'))
    return { format: 'contenox', ...contenox(text, options, source, undefined, json, true) };
  const fast = parseFastYaml(text, source);
  const data = fast?.data;
  if (fast && data !== null && typeof data === 'object' && !Array.isArray(data)) {
    if (!Object.prototype.hasOwnProperty.call(data, 'chain') && isContenoxChainData(data))
      return { format: 'contenox', ...contenox(text, options, source, undefined, fast) };
    if (Object.prototype.hasOwnProperty.call(data, 'chain')) {
      const loaded = loadChainDocumentFast(text, options, fast, source);
      if (loaded) return { format: 'chain', ...loaded };
      chainLikely = true;
    } else if (!chainLikely && Object.prototype.hasOwnProperty.call(data, 'steps')) {
      return {
        format: 'dsl',
        ...(loadDslDocumentFast(text, dslOptions, fast, source) ?? loadDslDocumentPrecise(text, dslOptions, undefined, source)),
      };
    }
  }
  // One `yaml` parse with the options of the front-end the text most likely belongs to (they differ
  // only in how duplicate keys are reported, not in the keys that decide the format).
  const parsed = parseDocument(text, chainLikely ? CHAIN_PARSE_OPTIONS : PRECISE_PARSE_OPTIONS);
  const root = parsed.contents;
  const keys = isMap(root) ? root.items.map((p) => (p.key as { value?: unknown } | null)?.value) : [];
  // A document with YAML errors still goes to the front-end its keys point at, which reports them located.
  if (
    !keys.includes('chain') &&
    !keys.includes('steps') &&
    (isContenoxChainData(plainData(parsed, text)) || isContenoxChainNode(parsed) || (parsed.errors.length > 0 && sniffContenox(text)))
  ) {
    return { format: 'contenox', ...contenox(text, options, source, chainLikely ? undefined : parsed) };
  }
  const format = keys.includes('chain') ? 'chain' : keys.includes('steps') ? 'dsl' : sniffFormat(text);
  if (format === 'chain') return { format, ...loadChainDocumentPrecise(text, options, chainLikely ? parsed : undefined, source) };
  if (format === 'dsl') return { format, ...loadDslDocumentPrecise(text, dslOptions, chainLikely ? undefined : parsed, source) };
  // A `.json` file that is no document because it is not JSON: its JSON syntax error says more than
  // a YAML one or "no `tasks:`".
  const notJson = options.file !== undefined && /\.json$/i.test(options.file) ? jsonSyntaxError(text, source, options.file) : undefined;
  if (notJson !== undefined) return { errors: [notJson], warnings: [] };
  // Not a document (rare): report the YAML errors of a parse with duplicate keys checked, as always.
  const plain = chainLikely ? parseDocument(text, PRECISE_PARSE_OPTIONS) : parsed;
  if (plain.errors.length > 0) {
    const e = plain.errors[0]!;
    const { line, column } = source.position(e.pos[0]);
    return {
      errors: [
        new StepforgeError('invalid_document', `invalid YAML: ${yamlErrorMessage(e)}`, {
          location: { file: options.file, line, column },
          source,
        }),
      ],
      warnings: [],
    };
  }
  const offset = root?.range?.[0] ?? 0;
  const { line, column } = source.position(offset);
  return {
    errors: [
      new StepforgeError(
        'invalid_document',
        isMap(root)
          ? 'not a Stepforge document: expected a `chain:` key (chain document), a `steps:` key (workflow DSL) or `tasks:`, a list of tasks with a `handler` (Contenox task chain)'
          : 'not a Stepforge document: expected a YAML or JSON mapping with a `chain:`, `steps:` or `tasks:` key',
        { location: { file: options.file, line, column }, source },
      ),
    ],
    warnings: [],
  };
}

// When the YAML does not parse, a top-level `chain:`/`steps:` line still tells which front-end to blame.
function sniffFormat(text: string): 'chain' | 'dsl' | undefined {
  if (/^(chain|"chain")\s*:/m.test(text) || /^\s*\{\s*"chain"\s*:/.test(text)) return 'chain';
  if (/^(steps|"steps")\s*:/m.test(text) || /^\s*\{[^]*"steps"\s*:/.test(text)) return 'dsl';
  return undefined;
}

function contenox(
  text: string,
  options: LoadDocumentOptions,
  source: SourceText,
  parsed?: ReturnType<typeof parseDocument>,
  fast?: { readonly data: unknown; readonly locator: Locator },
  validJson = false,
) {
  // A `.json` chain is read as JSON, as Contenox reads it: YAML would take a trailing comma or a
  // comment that JSON refuses, and the file would load here and fail there.
  if (!validJson && options.file !== undefined && /\.json$/i.test(options.file)) {
    const error = jsonSyntaxError(text, source, options.file);
    if (error !== undefined) return { errors: [error], warnings: [] };
  }
  return loadContenoxDocument(
    text,
    {
      ...(options.file !== undefined ? { file: options.file } : {}),
      ...(options.vars !== undefined ? { vars: options.vars } : {}),
      ...(options.requireMacros !== undefined ? { requireMacros: options.requireMacros } : {}),
    },
    parsed,
    source,
    fast ?? undefined,
  );
}

/** The JSON syntax error of text that starts like JSON, located, or undefined when it parses (or is YAML). */
function jsonSyntaxError(text: string, source: SourceText, file: string): StepforgeError | undefined {
  // Text that does not start like JSON is YAML in a `.json` file, which is read as YAML.
  if (!/^\s*[[{]/.test(text)) return undefined;
  try {
    JSON.parse(text);
    return undefined;
  } catch (e) {
    const message = (e as Error).message;
    const at = /at position (\d+)/.exec(message);
    const offset = at ? Number(at[1]) : jsonErrorOffset(text);
    const { line, column } = source.position(Math.min(offset, text.length));
    // Node quotes the text around the error in some messages; the caret excerpt shows it better.
    const reason = message.replace(/ in JSON at position \d+.*$/s, '').replace(/, (\.\.\.)?"[^]*" is not valid JSON$/, '');
    return new StepforgeError('invalid_document', `invalid JSON: ${reason}`, {
      location: { file, line, column },
      source,
      hint: 'a .json file is JSON: no trailing commas, no comments, every key in double quotes',
    });
  }
}

// A Contenox chain with a syntax error still goes to the Contenox front-end, which reports it located.
function sniffContenox(text: string): boolean {
  return /"tasks"\s*:\s*\[/.test(text) && /"handler"\s*:/.test(text);
}

/**
 * True when the YAML tree has the shape of a Contenox chain (`tasks:` a list of mappings each with a
 * `handler` key), read from the nodes: a chain whose data cannot be built (an alias without its anchor)
 * still goes to the Contenox front-end, which names the alias where it is written.
 */
function isContenoxChainNode(doc: Document.Parsed): boolean {
  const root = doc.contents;
  if (!isMap(root)) return false;
  const keyIs = (k: unknown, name: string) => isScalar(k) && k.value === name;
  // A task may be an alias of one written before it (`- *t`): its anchor's node decides.
  const node = (n: unknown): unknown => (isAlias(n) ? n.resolve(doc) : n);
  const tasks = node(root.items.find((p) => keyIs(p.key, 'tasks'))?.value);
  return (
    isSeq(tasks) &&
    tasks.items.length > 0 &&
    tasks.items.every((t) => {
      const m = node(t);
      return isMap(m) && m.items.some((p) => keyIs(p.key, 'handler'));
    })
  );
}

/**
 * The document's data for sniffing its format, or undefined when it has none: `toJS` throws on an
 * alias without its anchor (and the like), which the front-end the keys point at reports, located.
 */
function plainData(parsed: Document.Parsed, text: string): unknown {
  // A list or mapping as a key, or a tag outside plain data (a `!!binary` key): toJS would stringify
  // it with a process warning on stderr; the front-end names it.
  if (unsupportedYamlKeys(parsed.contents).length > 0 || yamlValueIssues(parsed, text).issues.length > 0) return undefined;
  try {
    return parsed.toJS();
  } catch {
    return undefined;
  }
}
