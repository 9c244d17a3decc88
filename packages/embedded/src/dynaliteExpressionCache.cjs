// A parse cache for dynalite's expression parsers (condition, update, projection), installed in the
// dynalite worker before dynalite loads. Plain CommonJS so the worker requires this file as it is,
// from src (tsx, vitest) and from dist (tsc copies it). node_modules stays untouched: the parsers'
// `parse` property is replaced by a memoised one, which dynalite's validations look up per call.
//
// Why: dynalite parses every ConditionExpression and UpdateExpression of every request with PEG
// parsers that backtrack, about a quarter of its CPU per request, while the runtime sends the same
// few expressions over and over with other values.
//
// Why it is safe: a parse depends on the expression, the ExpressionAttributeNames (names are
// substituted into the tree), and the ExpressionAttributeValues only through (a) the value objects
// it places in the tree, (b) their types (operand type checks), and (c) for `attribute_type` and
// `BETWEEN` the values themselves. So the cache key is the parser, the expression, every name
// binding, and every value key with its type; expressions that mention `attribute_type` or
// `between` are never cached. A cached tree holds markers where the values were, and each hit
// gets a fresh copy with this request's value objects in place (shared sub-trees stay shared).
// The parse also deletes the names and values it used from the request's "unused" sets (dynalite
// reports unused ones as errors afterwards); the cache records which ones a parse uses, measured on
// full sets so it does not depend on what an earlier expression of the same request used, and
// deletes the same ones on a hit. Only successful parses are cached: errors always come from the
// real parser, so their messages are dynalite's own.
'use strict';

const { createRequire } = require('node:module');

/** Entries kept per parser before the oldest is dropped. */
const DEFAULT_MAX_ENTRIES = 500;
const UNCACHEABLE = /between|attribute_type/i;

/** The type tag of an AttributeValue: its keys (a valid one has exactly one, `S`, `N`, `M`, …). */
function typeTag(value) {
  if (value === null || typeof value !== 'object') return typeof value;
  return Object.keys(value).join('|');
}

/**
 * The cache key, or undefined when the expression must not be cached. JSON keeps its parts apart
 * whatever characters an expression or an attribute name holds.
 */
function cacheKey(str, context) {
  if (typeof str !== 'string' || UNCACHEABLE.test(str)) return undefined;
  const vals = context.attrVals;
  const types = {};
  if (vals) for (const k in vals) types[k] = typeTag(vals[k]);
  return JSON.stringify([str, context.isKeyCondition === true, context.attrNames || null, types]);
}

function fullSet(map) {
  const out = {};
  if (map) for (const k in map) out[k] = true;
  return out;
}

/** The keys of `map` that `remaining` no longer holds. */
function usedKeys(map, remaining) {
  const used = [];
  if (map) for (const k in map) if (!(k in remaining)) used.push(k);
  return used;
}

/** A marker standing where a value object was. */
class ValueSlot {
  constructor(key) {
    this.key = key;
  }
}

/**
 * Copies a parse tree (arrays, plain and null-prototype objects, primitives), keeping shared
 * sub-trees shared; `swap` maps a node to its replacement (or undefined to copy it).
 */
function copyTree(node, swap, seen) {
  if (node === null || typeof node !== 'object') return node;
  const replaced = swap(node);
  if (replaced !== undefined) return replaced;
  const done = seen.get(node);
  if (done !== undefined) return done;
  if (Array.isArray(node)) {
    const out = new Array(node.length);
    seen.set(node, out);
    for (let i = 0; i < node.length; i++) out[i] = copyTree(node[i], swap, seen);
    return out;
  }
  const out = Object.getPrototypeOf(node) === null ? Object.create(null) : {};
  seen.set(node, out);
  for (const k of Object.keys(node)) out[k] = copyTree(node[k], swap, seen);
  return out;
}

/**
 * A parser whose `parse(str, { context })` answers as `parser.parse` does, from a cache when the
 * same expression was parsed before with the same names and value types.
 */
function memoizeExpressionParser(parser, options) {
  const maxEntries = (options && options.maxEntries) || DEFAULT_MAX_ENTRIES;
  const entries = new Map();
  const stats = { hits: 0, misses: 0, uncacheable: 0 };
  function parse(str, opts) {
    const context = opts && opts.context;
    const key = context ? cacheKey(str, context) : undefined;
    if (key === undefined) {
      stats.uncacheable++;
      return parser.parse(str, opts);
    }
    const unusedNames = context.unusedAttrNames || {};
    const unusedVals = context.unusedAttrVals || {};
    const hit = entries.get(key);
    if (hit !== undefined) {
      stats.hits++;
      // Most recently used last, so the first entry is the one to drop.
      entries.delete(key);
      entries.set(key, hit);
      for (const k of hit.names) delete unusedNames[k];
      for (const k of hit.vals) delete unusedVals[k];
      const vals = context.attrVals;
      return copyTree(hit.tree, (n) => (n instanceof ValueSlot ? vals[n.key] : undefined), new Map());
    }
    stats.misses++;
    const probe = Object.assign({}, context, { unusedAttrNames: fullSet(context.attrNames), unusedAttrVals: fullSet(context.attrVals) });
    let result;
    try {
      result = parser.parse(str, Object.assign({}, opts, { context: probe }));
    } finally {
      // The real parser deleted these from the probe's sets; do the same to the request's.
      for (const k of usedKeys(context.attrNames, probe.unusedAttrNames)) delete unusedNames[k];
      for (const k of usedKeys(context.attrVals, probe.unusedAttrVals)) delete unusedVals[k];
    }
    // A string is a validation message (the parser returns those rather than throwing): not cached.
    if (result !== null && typeof result === 'object') {
      const slots = new Map();
      const vals = context.attrVals;
      if (vals) for (const k in vals) if (vals[k] !== null && typeof vals[k] === 'object') slots.set(vals[k], new ValueSlot(k));
      const tree = copyTree(result, (n) => slots.get(n), new Map());
      entries.set(key, { tree, names: usedKeys(context.attrNames, probe.unusedAttrNames), vals: usedKeys(context.attrVals, probe.unusedAttrVals) });
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value);
    }
    return result;
  }
  return { SyntaxError: parser.SyntaxError, parse, stats, get size() { return entries.size; } };
}

/**
 * Replaces `parse` on dynalite's three expression parser modules by memoised ones. `dynaliteEntry`
 * is the resolved path of dynalite's main file, so these are the module instances dynalite itself
 * loads. Call before dynalite handles a request; calling it again changes nothing.
 */
function installExpressionCache(dynaliteEntry, options) {
  const requireFromDynalite = createRequire(dynaliteEntry);
  return installOn((name) => requireFromDynalite(`./db/${name}`), options);
}

/**
 * The same, on parser modules given by name (`parsers`: `{ conditionParser, updateParser,
 * projectionParser }`): those of the one-file dynalite (dist/bundle/dynalite.cjs), which are not
 * files dynalite's folder can resolve.
 */
function installExpressionCacheOn(parsers, options) {
  return installOn((name) => parsers[name], options);
}

function installOn(parserModule, options) {
  const installed = [];
  for (const name of ['conditionParser', 'updateParser', 'projectionParser']) {
    const mod = parserModule(name);
    if (!mod || typeof mod.parse !== 'function') throw new Error(`dynalite's ${name} has no parse function to memoise`);
    if (mod.parse && mod.parse.memoized) continue;
    const memo = memoizeExpressionParser({ parse: mod.parse, SyntaxError: mod.SyntaxError }, options);
    memo.parse.memoized = true;
    memo.parse.stats = memo.stats;
    mod.parse = memo.parse;
    installed.push(name);
  }
  return installed;
}

module.exports = { memoizeExpressionParser, installExpressionCache, installExpressionCacheOn };
