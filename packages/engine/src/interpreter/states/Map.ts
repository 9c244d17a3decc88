// Map: runs its ItemProcessor once per item (inline, or as a distributed map's child runs), with
// MaxConcurrency and tolerated failures; the output is the items' outputs in order.
import { randomUUID } from 'node:crypto';
import { jsonataBody } from '../../jsonata/JsonataEvaluator.js';
import { evalField, evalTemplate } from '../jsonataFields.js';
import { evaluatePayloadTemplate, requirePath } from '../pathEnv.js';
import { MapRun } from '../MapRun.js';
import { Scope } from '../Scope.js';
import { RuntimeFailure } from '../StateError.js';
import { finish, inputPath } from '../stateIo.js';
import { TaskFailure, toFailure } from '../TaskFailure.js';
import {
  Aborted,
  json,
  typeName,
  type ExecutionContext,
  type Frame,
  type Obj,
  type StateRun,
  type StepResult,
  type Thread,
} from '../ExecutionContext.js';
import type { QueryLanguage } from '../types.js';

const listenerCache = new WeakMap<object, boolean>();

/** True when a processor has states that listen for aborts (Task, Wait, nested Map/Parallel). */
function listensForAbort(machine: Obj): boolean {
  let v = listenerCache.get(machine);
  if (v === undefined) {
    v = Object.values((machine.States as Record<string, Obj> | undefined) ?? {}).some((st) =>
      ['Task', 'Wait', 'Map', 'Parallel'].includes(st.Type as string),
    );
    listenerCache.set(machine, v);
  }
  return v;
}

/** MaxConcurrency and the tolerated failures: a number, a `…Path`, or a JSONata expression. */
async function mapNumber(
  ctx: ExecutionContext,
  run: StateRun,
  eff: unknown,
  raw: unknown,
  field: string,
  kind: 'integer' | 'float',
): Promise<number | undefined> {
  const v = run.st[field];
  if (run.ql === 'JSONata' && jsonataBody(v) !== undefined) {
    const n = await evalTemplate(v, field, ctx.bindings(run, raw));
    if (typeof n !== 'number' || (kind === 'integer' && !Number.isInteger(n))) {
      throw new RuntimeFailure(
        'States.QueryEvaluationError',
        `The JSONata expression '${jsonataBody(v)}' specified for the field '${field}' returned an unexpected result type. Expected '${kind === 'integer' ? 'integer' : 'number'}', but was '${typeName(n)}' for value: ${json(n)}`,
        field,
      );
    }
    return n;
  }
  if (typeof v === 'number') return v;
  const p = run.st[`${field}Path`];
  if (typeof p === 'string') {
    let n = requirePath(p, eff, ctx.pathEnv(run));
    // Numeric text is accepted, as AWS parses the referenced value.
    if (typeof n === 'string' && n.trim() !== '' && !Number.isNaN(Number(n))) n = Number(n);
    if (typeof n !== 'number' || (kind === 'integer' && !Number.isInteger(n))) {
      throw new RuntimeFailure(
        'States.Runtime',
        `The ${field}Path field refers to value "${typeof n === 'string' ? n : json(n)}" which is not a valid ${kind}: ${p}`,
      );
    }
    return n;
  }
  return undefined;
}

/** The items to iterate (JSONPath ItemsPath over the effective input, or JSONata Items) and that effective input. */
async function itemsOf(ctx: ExecutionContext, run: StateRun, raw: unknown): Promise<{ eff: unknown; items: unknown[] }> {
  const st = run.st;
  if (run.ql !== 'JSONata') {
    const eff = inputPath(ctx, run, raw);
    const items = typeof st.ItemsPath === 'string' ? requirePath(st.ItemsPath, eff, ctx.pathEnv(run)) : eff;
    if (!Array.isArray(items)) throw new RuntimeFailure('States.Runtime', `Map state input must be an array but was: ${json(items)}`);
    return { eff, items };
  }
  if (st.Items === undefined) {
    if (!Array.isArray(raw))
      throw new RuntimeFailure('States.QueryEvaluationError', `Map state input must be an array but was: ${json(raw)}`);
    return { eff: raw, items: raw };
  }
  const body = jsonataBody(st.Items);
  const items =
    body !== undefined
      ? await evalField(body, 'Items', ctx.bindings(run, raw))
      : await evalTemplate(st.Items, 'Items', ctx.bindings(run, raw));
  if (!Array.isArray(items)) {
    throw new RuntimeFailure(
      'States.QueryEvaluationError',
      `The JSONata expression '${body ?? json(st.Items)}' specified for the field 'Items' returned an unexpected result type. Expected 'array', but was '${typeName(items)}' for value: ${json(items)}`,
      'Items',
    );
  }
  return { eff: raw, items };
}

const childMachines = new WeakMap<object, Obj>();

/** The ItemProcessor as a child execution's state machine (with the query language it inherits), made once. */
function childMachine(processor: Obj, ql: QueryLanguage): Obj {
  let m = childMachines.get(processor);
  if (m === undefined || m.QueryLanguage !== ql) {
    const { ProcessorConfig: _config, ...rest } = processor;
    m = { ...rest, QueryLanguage: ql };
    childMachines.set(processor, m);
  }
  return m;
}

const exceeded = (): TaskFailure =>
  new TaskFailure('States.ExceedToleratedFailureThreshold', 'The specified tolerated failure threshold was exceeded');

/**
 * Runs a Map Run's items, as many at a time as its MaxConcurrency allows now: an UpdateMapRun that
 * raises it starts more items at once, one that lowers it lets the running ones finish. Resolves
 * when no item runs and none is left to start (or `stopped()`); with the error an item's run threw
 * outside its own failure handling, if one did.
 */
function pumpItems(
  mapRun: MapRun,
  length: number,
  next: () => number,
  runOne: (index: number) => Promise<void>,
  stopped: () => boolean,
  recheck: () => void,
): Promise<{ error: unknown } | undefined> {
  return new Promise((resolve) => {
    let active = 0;
    let started = 0;
    let fatal: { error: unknown } | undefined;
    const pump = (): void => {
      while (started < length && fatal === undefined && !stopped() && active < mapRun.limit) {
        active++;
        started++;
        runOne(next())
          .catch((error: unknown) => {
            fatal ??= { error };
          })
          .finally(() => {
            active--;
            pump();
          });
      }
      if (active === 0 && (started >= length || fatal !== undefined || stopped())) {
        mapRun.onUpdate = undefined;
        resolve(fatal);
      }
    };
    mapRun.onUpdate = () => {
      recheck();
      pump();
    };
    pump();
  });
}

/** One attempt of a Map state (Retry and Catch wrap it). */
export async function runMap(ctx: ExecutionContext, run: StateRun, raw: unknown): Promise<StepResult> {
  const st = run.st;
  const processor = ((st.ItemProcessor ?? st.Iterator) as Obj | undefined) ?? {};
  const mode = ((processor.ProcessorConfig as Obj | undefined)?.Mode as string | undefined) ?? 'INLINE';
  const { eff, items: list } = await itemsOf(ctx, run, raw);
  const maxConc = (await mapNumber(ctx, run, eff, raw, 'MaxConcurrency', 'integer')) ?? 0;
  if (maxConc < 0) throw new RuntimeFailure('States.Runtime', `MaxConcurrency cannot be negative.`);
  const outer = run.frame.thread;
  const startedId = ctx.emit(outer, 'MapStateStarted', { length: list.length });
  const tolCount = await mapNumber(ctx, run, eff, raw, 'ToleratedFailureCount', 'integer');
  if (tolCount !== undefined && tolCount < 0) throw new RuntimeFailure('States.Runtime', 'ToleratedFailureCount cannot be negative.');
  const tolPct = await mapNumber(ctx, run, eff, raw, 'ToleratedFailurePercentage', 'float');
  if (tolPct !== undefined && (tolPct < 0 || tolPct > 100))
    throw new RuntimeFailure('States.Runtime', 'ToleratedFailurePercentage must be between 0 and 100.');
  let chainPrev = startedId;
  const distributed = mode === 'DISTRIBUTED';
  // A distributed Map runs its items as a Map Run, whose settings UpdateMapRun may change while it runs.
  const mapRun = distributed
    ? new MapRun({
        stateMachineArn: ctx.stateMachineArn,
        executionArn: ctx.executionArn,
        label: typeof st.Label === 'string' ? st.Label : run.name,
        id: randomUUID(),
        startDate: ctx.clock.now(),
        total: list.length,
        maxConcurrency: maxConc,
        ...(tolCount !== undefined ? { toleratedFailureCount: tolCount } : {}),
        ...(tolPct !== undefined ? { toleratedFailurePercentage: tolPct } : {}),
      })
    : undefined;
  if (mapRun) {
    ctx.mapRuns?.started(mapRun);
    ctx.emit(outer, 'MapRunStarted', { mapRunArn: mapRun.mapRunArn });
  }
  const endRun = (status: 'SUCCEEDED' | 'FAILED' | 'ABORTED'): void => {
    if (!mapRun) return;
    mapRun.end(status, ctx.clock.now());
    ctx.mapRuns?.ended(mapRun);
  };
  const selector = st.ItemSelector ?? st.Parameters;
  const ac = new AbortController();
  const onOuter = () => ac.abort(run.frame.signal.reason);
  run.frame.signal.addEventListener('abort', onOuter, { once: true });
  const results = new Array<unknown>(list.length);
  let failures = 0;
  let failure: unknown;
  let failureThread: Thread | undefined;
  const tolerated = (n: number): boolean => {
    if (mapRun) return mapRun.tolerates(n);
    if (tolCount === undefined && tolPct === undefined) return n === 0;
    if (tolCount !== undefined && n <= tolCount) return true;
    if (tolPct !== undefined && list.length > 0 && (n / list.length) * 100 <= tolPct) return true;
    return false;
  };
  const procQl = (processor.QueryLanguage as QueryLanguage | undefined) ?? run.ql;
  // A distributed Map's items are child workflow executions of the ItemProcessor, as a state machine of its own.
  const childDefinition = distributed ? childMachine(processor, procQl) : undefined;
  const express = (processor.ProcessorConfig as Obj | undefined)?.ExecutionType === 'EXPRESS';
  const children = new Set<AbortController>();
  // Only processors with states that listen for aborts need per-iteration signals.
  const needsOwnSignal = listensForAbort(processor);
  ac.signal.addEventListener('abort', () => children.forEach((c) => c.abort(ac.signal.reason)), { once: true });
  let nextIndex = 0;
  const runOne = async (index: number): Promise<void> => {
    const value = list[index];
    let itemInput: unknown = value;
    if (selector !== undefined) {
      const itemRun: StateRun = { ...run, frame: { ...run.frame, mapItem: { Index: index, Value: value } } };
      itemInput =
        run.ql === 'JSONata'
          ? await evalTemplate(selector, 'ItemSelector', ctx.bindings(itemRun, raw))
          : evaluatePayloadTemplate(selector, eff, ctx.pathEnv(itemRun));
    }
    const thread: Thread = { prev: chainPrev, silent: distributed || run.frame.thread.silent };
    mapRun?.itemStarted();
    if (!distributed) ctx.emit(thread, 'MapIterationStarted', { index, name: run.name });
    // Each iteration gets its own signal so tasks inside add listeners to a short list, not one shared by 10k iterations.
    const child = needsOwnSignal ? new AbortController() : undefined;
    if (child) children.add(child);
    // A child execution has a scope of its own (it cannot read the parent's variables); an inline iteration reads them.
    const frame: Frame = {
      scope: childDefinition ? run.frame.scope : new Scope(run.frame.scope),
      thread,
      signal: child ? child.signal : ac.signal,
      ql: procQl,
      top: false,
    };
    try {
      results[index] = childDefinition
        ? await ctx.runMapItem(childDefinition, itemInput, { mapRun: mapRun!, signal: frame.signal, express })
        : await ctx.runStates(processor, processor.StartAt as string, itemInput, frame);
      mapRun?.itemEnded('succeeded');
      chainPrev = thread.prev;
      if (!distributed) outer.prev = ctx.emit(thread, 'MapIterationSucceeded', { index, name: run.name }, false);
    } catch (e) {
      if (e instanceof Aborted) {
        mapRun?.itemEnded('aborted');
        if (!distributed) ctx.emit(thread, 'MapIterationAborted', { index, name: run.name }, false);
        return;
      }
      if (!distributed) ctx.emit(thread, 'MapIterationFailed', { index, name: run.name }, false);
      outer.prev = thread.prev;
      mapRun?.itemEnded('failed');
      failures++;
      const f = toFailure(e);
      results[index] = { Error: f.error, ...(f.cause !== undefined ? { Cause: f.cause } : {}) };
      if (!tolerated(failures) && failure === undefined) {
        failure = (mapRun ? !mapRun.toleranceSet : tolCount === undefined && tolPct === undefined) ? e : exceeded();
        failureThread = thread;
        ac.abort();
      }
    } finally {
      if (child) children.delete(child);
    }
  };
  try {
    if (mapRun) {
      // A Map Run's concurrency and tolerance are read again at every item start and after each update.
      // An error outside an item's own failure handling (its ItemSelector) fails the Map and stops the other items.
      const runOrStop = (i: number) =>
        runOne(i).catch((e: unknown) => {
          ac.abort();
          throw e;
        });
      const fatal = await pumpItems(
        mapRun,
        list.length,
        () => nextIndex++,
        runOrStop,
        () => failure !== undefined || ac.signal.aborted,
        () => {
          if (failure === undefined && !mapRun.tolerates(failures)) {
            failure = exceeded();
            ac.abort();
          }
        },
      );
      if (fatal !== undefined && failure === undefined && !run.frame.signal.aborted) failure = fatal.error;
    } else {
      const width = maxConc === 0 ? list.length : Math.min(maxConc, list.length);
      const worker = async (): Promise<void> => {
        while (nextIndex < list.length && failure === undefined && !ac.signal.aborted) {
          await runOne(nextIndex++);
        }
      };
      const workers: Promise<void>[] = [];
      for (let w = 0; w < width; w++) workers.push(worker());
      await Promise.all(workers);
    }
  } finally {
    run.frame.signal.removeEventListener('abort', onOuter);
  }
  if (run.frame.signal.aborted) {
    endRun('ABORTED');
    throw new Aborted();
  }
  if (failure !== undefined) {
    if (failureThread) outer.prev = failureThread.prev;
    endRun('FAILED');
    if (distributed) ctx.emit(outer, 'MapRunFailed');
    throw failure;
  }
  endRun('SUCCEEDED');
  if (distributed) ctx.emit(outer, 'MapRunSucceeded');
  ctx.emit(outer, 'MapStateSucceeded', undefined, false);
  return finish(ctx, run, raw, results);
}
