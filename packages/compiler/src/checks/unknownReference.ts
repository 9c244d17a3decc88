// A name that must refer to something the document declares (a task handle, a step, an agent, a
// function, an MCP server, a `goto` target) and does not: reported with the closest declared name,
// or, with none close, where to declare it. Each format words the finding its own way, here.
import { didYouMean } from '@stepforge/contract';
import type { CheckFinding } from './CheckFinding.js';

/** A reference that resolves to nothing, and the declared name it most likely meant. */
export interface UnknownReference {
  readonly name: string;
  readonly suggestion?: string;
}

/** What a reference may name: the keys of a record, map or set, or a list of names. */
export type Declared = ReadonlySet<string> | ReadonlyMap<string, unknown> | Readonly<Record<string, unknown>> | readonly string[];

/** Undefined when `name` is declared; else the unknown reference, with the closest declared name. */
export function unknownReference(name: string, declared: Declared): UnknownReference | undefined {
  if (isDeclared(name, declared)) return undefined;
  return withSuggestion(name, namesOf(declared));
}

/** The unknown reference `name`, with the closest of `known` (the caller has already found it undeclared). */
export function withSuggestion(name: string, known: Iterable<string>): UnknownReference {
  const suggestion = didYouMean(name, known);
  return suggestion === undefined ? { name } : { name, suggestion };
}

/** A chain expression's handle with no task: did-you-mean, else where to define it. */
export function unknownHandle(ref: UnknownReference): CheckFinding & { readonly code: 'unknown_handle' } {
  return {
    code: 'unknown_handle',
    // No close match: the handle is most likely a step not written yet.
    message: `unknown task handle '${ref.name}'; ${ref.suggestion === undefined ? 'define it under tasks:' : `did you mean '${ref.suggestion}'?`}`,
    details: { handle: ref.name, ...(ref.suggestion === undefined ? {} : { suggestion: ref.suggestion }) },
  };
}

/** The workflow DSL's declarations a step names, with their diagnostic class and section. */
const DSL_DECLARATIONS = {
  step: { code: 'unknown_step', section: 'steps' },
  agent: { code: 'unknown_agent', section: 'agents' },
  function: { code: 'unknown_function', section: 'functions' },
  'MCP server': { code: 'unknown_mcp_server', section: 'mcp_servers' },
} as const;

/** A workflow DSL reference to an undeclared step, agent, function or MCP server. */
export function unknownDeclaration(what: keyof typeof DSL_DECLARATIONS, ref: UnknownReference): CheckFinding & { readonly hint: string } {
  const { code, section } = DSL_DECLARATIONS[what];
  return { code, message: `unknown ${what} '${ref.name}'`, hint: declarationHint(ref, section) };
}

/** "did you mean …?" for a misspelt name, or the section to declare it under. */
export function declarationHint(ref: UnknownReference, section: string): string {
  return ref.suggestion !== undefined ? `did you mean '${ref.suggestion}'?` : `declare it under ${section}:`;
}

/** A Contenox branch (or `on_failure`) of task `from` that goes to no task of the chain. */
export function danglingGoto(from: string, ref: UnknownReference, ids: Iterable<string>): CheckFinding & { readonly hint: string } {
  return {
    code: 'dangling_goto',
    message: `task '${from}' goes to '${ref.name}', which is no task of this chain${ref.suggestion ? ` (did you mean '${ref.suggestion}'?)` : ''}`,
    hint: `name one of: ${[...ids].join(', ')}, or "end"`,
    details: { goto: ref.name },
  };
}

function isDeclared(name: string, declared: Declared): boolean {
  if (Array.isArray(declared)) return declared.includes(name);
  if (declared instanceof Set || declared instanceof Map) return declared.has(name);
  return Object.prototype.hasOwnProperty.call(declared, name);
}

function namesOf(declared: Declared): Iterable<string> {
  if (Array.isArray(declared)) return declared;
  if (declared instanceof Set) return declared as ReadonlySet<string>;
  if (declared instanceof Map) return declared.keys();
  return Object.keys(declared);
}
