// The persistence suite, shared so it runs on dynalite and on DynamoDB Local.
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import jsonata from 'jsonata';
import { describe, expect, it } from 'vitest';
import { approvalIdFor } from '../src/persistence/ApprovalStore.js';
import { IdempotencyItemAlreadyExistsError } from '../src/persistence/IdempotencyRecord.js';
import { runIdempotent } from '../src/runtime/runIdempotent.js';
import type { Runtime } from '../src/runtime/Runtime.js';

/** A step record's item as stored, keys and `idem` included. */
async function rawStep(rt: Runtime, runId: string, stepId: string): Promise<Record<string, unknown>> {
  const r = await rt.db.doc.send(new GetCommand({ TableName: rt.db.tableName, Key: { pk: `RUN#${runId}`, sk: `STEP#${stepId}` }, ConsistentRead: true }));
  return r.Item ?? {};
}

/** Registers the persistence tests against the runtime `get()` returns (created in the caller's beforeAll). */
export function persistenceSuite(label: string, get: () => Runtime): void {
  describe(`Class: DynamoDBPersistenceLayer (${label})`, () => {
    describe('Method: saveInProgress', () => {
      it('claims a fresh key and refuses a second claim with the existing record', async () => {
        const rt = get();
        const now = Date.now();
        await rt.idempotency.saveInProgress('k1', { leaseId: 'a', nowMs: now, leaseSeconds: 60, ttlSeconds: 3600, idempotent: false });
        const err = await rt.idempotency
          .saveInProgress('k1', { leaseId: 'b', nowMs: now, leaseSeconds: 60, ttlSeconds: 3600, idempotent: false })
          .catch((e: unknown) => e);
        expect((err as Error).name).toBe('IdempotencyItemAlreadyExistsError');
        const existing = (err as IdempotencyItemAlreadyExistsError).existingRecord;
        expect(existing.status).toBe('INPROGRESS');
        expect(existing.leaseId).toBe('a');
      });

      it('takes over an expired lease that never dispatched, but not one that did', async () => {
        const rt = get();
        const now = Date.now();
        await rt.idempotency.saveInProgress('k2', { leaseId: 'a', nowMs: now - 120_000, leaseSeconds: 1, ttlSeconds: 3600, idempotent: false });
        await rt.idempotency.saveInProgress('k2', { leaseId: 'b', nowMs: now, leaseSeconds: 1, ttlSeconds: 3600, idempotent: false });
        expect((await rt.idempotency.getRecord('k2'))?.leaseId).toBe('b');
        await rt.idempotency.markDispatched('k2', { leaseId: 'b', nowMs: now, target: 'http POST https://x', idempotent: false });
        const err = await rt.idempotency
          .saveInProgress('k2', { leaseId: 'c', nowMs: now + 5_000, leaseSeconds: 1, ttlSeconds: 3600, idempotent: false })
          .catch((e: unknown) => e);
        expect((err as IdempotencyItemAlreadyExistsError).existingRecord.dispatchTarget).toBe('http POST https://x');
        // An idempotent caller may take it over.
        await rt.idempotency.saveInProgress('k2', { leaseId: 'd', nowMs: now + 5_000, leaseSeconds: 1, ttlSeconds: 3600, idempotent: true });
        expect((await rt.idempotency.getRecord('k2'))?.leaseId).toBe('d');
      });

      it('treats a completed record past its expiry as EXPIRED and lets a new attempt claim it', async () => {
        const rt = get();
        const now = Date.now();
        await rt.idempotency.saveInProgress('k3', { leaseId: 'a', nowMs: now - 10_000_000, leaseSeconds: 60, ttlSeconds: 10, idempotent: false });
        await rt.idempotency.saveSuccess('k3', { leaseId: 'a', output: { v: 1 }, nowMs: now - 10_000_000, ttlSeconds: 10 });
        await rt.idempotency.saveInProgress('k3', { leaseId: 'b', nowMs: now, leaseSeconds: 60, ttlSeconds: 10, idempotent: false });
        expect((await rt.idempotency.getRecord('k3'))?.status).toBe('INPROGRESS');
      });
    });

    describe('Function: runIdempotent', () => {
      it('returns the committed output instead of recomputing', async () => {
        const rt = get();
        let calls = 0;
        const opts = { layer: rt.idempotency, key: 'r1', clock: Date.now, leaseSeconds: 60, ttlSeconds: 3600 };
        const a = await runIdempotent(opts, async () => { calls++; return { n: 42 }; });
        const b = await runIdempotent(opts, async () => { calls++; return { n: 43 }; });
        expect(a).toEqual({ value: { n: 42 }, reused: false });
        expect(b).toEqual({ value: { n: 42 }, reused: true });
        expect(calls).toBe(1);
      });

      it('refuses a concurrent attempt with StepInProgress', async () => {
        const rt = get();
        const opts = { layer: rt.idempotency, key: 'r2', clock: Date.now, leaseSeconds: 60, ttlSeconds: 3600 };
        let release!: () => void;
        const first = runIdempotent(opts, () => new Promise<string>((r) => { release = () => r('first'); }));
        await new Promise((r) => setTimeout(r, 50));
        const second = await runIdempotent(opts, async () => 'second').catch((e: unknown) => e);
        expect((second as Error).name).toBe('StepInProgress');
        release();
        expect((await first).value).toBe('first');
      });

      // Embedded stack: a lease of an earlier generation of the stack's owner belongs to a process
      // that has ended (RuntimeConfig.leaseEpoch), on an IDEM# item or on a step record.
      for (const [where, key] of [['IDEM# item', 'e1'], ['step record', 'run-e1:plan:000000000000000000000001']] as const) {
        it(`takes over a running lease of an earlier stack generation at once, on a ${where}, unless it dispatched a call that is not idempotent`, async () => {
          const rt = get();
          const held = (k: string, epoch: number) => rt.idempotency.saveInProgress(k, { leaseId: `held-${k}`, nowMs: Date.now(), leaseSeconds: 900, ttlSeconds: 3600, idempotent: false, leaseEpoch: epoch });
          const opts = (k: string, epoch: number) => ({ layer: rt.idempotency, key: k, clock: Date.now, leaseSeconds: 900, ttlSeconds: 3600, leaseEpoch: epoch });
          // Same generation: the holder may be alive, so the usual rule (wait for the lease).
          await held(key, 7);
          expect(((await runIdempotent(opts(key, 7), async () => 'no').catch((e: unknown) => e)) as Error).name).toBe('StepInProgress');
          // A later generation: the holder has ended, the step runs now.
          expect(await runIdempotent(opts(key, 8), async () => 'ran')).toEqual({ value: 'ran', reused: false });
          // Dispatched before its process ended, not idempotent: the outcome is unknown, never repeated.
          const k2 = `${key}-dispatched`;
          await held(k2, 8);
          await rt.idempotency.markDispatched(k2, { leaseId: `held-${k2}`, nowMs: Date.now(), target: 'slack webhook', idempotent: false });
          const unknown = await runIdempotent(opts(k2, 9), async () => 'no').catch((e: unknown) => e);
          expect((unknown as Error).name).toBe('StepOutcomeUnknown');
          expect((unknown as Error).message).toContain('called slack webhook');
          // The same with an idempotent call: repeated.
          const k3 = `${key}-idempotent`;
          await held(k3, 8);
          await rt.idempotency.markDispatched(k3, { leaseId: `held-${k3}`, nowMs: Date.now(), target: 'http', idempotent: true });
          expect(await runIdempotent({ ...opts(k3, 9), idempotent: true }, async () => 'again')).toEqual({ value: 'again', reused: false });
        });
      }

      it('deletes the record after a definite failure so a retry runs again', async () => {
        const rt = get();
        const opts = { layer: rt.idempotency, key: 'r3', clock: Date.now, leaseSeconds: 60, ttlSeconds: 3600 };
        const err = await runIdempotent(opts, async () => { throw Object.assign(new Error('boom'), { name: 'ToolError' }); }).catch((e: unknown) => e);
        expect((err as Error).message).toBe('boom');
        expect(await rt.idempotency.getRecord('r3')).toBeUndefined();
        expect((await runIdempotent(opts, async () => 'ok')).value).toBe('ok');
      });
    });
  });

  describe(`Class: StepRecordPersistenceLayer (${label})`, () => {
    const claim = (leaseId: string, now = Date.now()) => ({ leaseId, nowMs: now, leaseSeconds: 60, ttlSeconds: 3600, idempotent: false });
    const keyOf = (run: string, step: string, n: number) => `${run}:${step}:${String(n).padStart(24, '0')}`;

    describe('Method: saveInProgress', () => {
      it('claims a step key on its step record, marking it RUNNING and counting the attempt', async () => {
        const rt = get();
        await rt.idempotency.saveInProgress(keyOf('run-l1', 'plan', 1), claim('a'));
        expect(await rt.runs.getStep('run-l1', 'plan')).toMatchObject({ runId: 'run-l1', stepId: 'plan', status: 'RUNNING', attempts: 1 });
        expect(await rt.idempotency.getRecord(keyOf('run-l1', 'plan', 1))).toMatchObject({ status: 'INPROGRESS', leaseId: 'a', runId: 'run-l1', stepId: 'plan' });
        const err = await rt.idempotency.saveInProgress(keyOf('run-l1', 'plan', 1), claim('b')).catch((e: unknown) => e);
        expect((err as Error).name).toBe('IdempotencyItemAlreadyExistsError');
        expect((err as IdempotencyItemAlreadyExistsError).existingRecord).toMatchObject({ status: 'INPROGRESS', leaseId: 'a' });
      });

      it('keeps another key of the same step instance on its own IDEM# item', async () => {
        const rt = get();
        await rt.idempotency.saveInProgress(keyOf('run-l2', 'tool', 1), claim('a'));
        await rt.idempotency.saveInProgress(keyOf('run-l2', 'tool', 2), claim('b'));
        expect((await rt.idempotency.getRecord(keyOf('run-l2', 'tool', 1)))?.leaseId).toBe('a');
        expect((await rt.idempotency.getRecord(keyOf('run-l2', 'tool', 2)))?.leaseId).toBe('b');
        await rt.idempotency.saveSuccess(keyOf('run-l2', 'tool', 2), { leaseId: 'b', output: { v: 2 }, nowMs: Date.now(), ttlSeconds: 3600, step: { output: 'two' } });
        expect(await rt.idempotency.getRecord(keyOf('run-l2', 'tool', 2))).toMatchObject({ status: 'COMPLETED', output: { v: 2 } });
        expect(await rt.idempotency.getRecord(keyOf('run-l2', 'tool', 1))).toMatchObject({ status: 'INPROGRESS', leaseId: 'a' });
        expect(await rt.runs.getStep('run-l2', 'tool')).toMatchObject({ status: 'SUCCEEDED', output: 'two', attempts: 2 });
      });
    });

    describe('Method: saveSuccess', () => {
      it('commits the output and the step record\'s end in one write, and refuses a lost lease', async () => {
        const rt = get();
        const key = keyOf('run-l3', 'draft', 3);
        await rt.idempotency.saveInProgress(key, claim('a'));
        const lost = await rt.idempotency.saveSuccess(key, { leaseId: 'x', output: 1, nowMs: Date.now(), ttlSeconds: 3600 }).catch((e: unknown) => e);
        expect((lost as Error).name).toBe('IdempotencyLeaseLostError');
        await rt.idempotency.saveSuccess(key, { leaseId: 'a', output: { output: 'text' }, nowMs: Date.now(), ttlSeconds: 3600, step: { output: 'text', usage: { inputTokens: 1, outputTokens: 2 } } });
        expect(await rt.idempotency.getRecord(key)).toMatchObject({ status: 'COMPLETED', output: { output: 'text' } });
        const step = await rt.runs.getStep('run-l3', 'draft');
        expect(step).toMatchObject({ status: 'SUCCEEDED', output: 'text', usage: { inputTokens: 1, outputTokens: 2 }, attempts: 1 });
        expect(Object.keys(step ?? {})).not.toContain('idem');
      });
      it('keeps the step\'s output once, in the committed value, and the step record reads it from there', async () => {
        const rt = get();
        const key = keyOf('run-l5', 'draft', 5);
        const output = { text: 'x'.repeat(200), n: 5 };
        await rt.idempotency.saveInProgress(key, claim('a'));
        await rt.idempotency.saveSuccess(key, { leaseId: 'a', output: { output, usage: { inputTokens: 1, outputTokens: 2 } }, nowMs: Date.now(), ttlSeconds: 3600, step: { output, usage: { inputTokens: 1, outputTokens: 2 } } });
        const raw = await rawStep(rt, 'run-l5', 'draft');
        expect(raw).not.toHaveProperty('output');
        expect(raw.idem).toMatchObject({ status: 'COMPLETED', output: { output } });
        expect(await rt.runs.getStep('run-l5', 'draft')).toMatchObject({ status: 'SUCCEEDED', output, usage: { inputTokens: 1, outputTokens: 2 } });
        expect((await rt.runs.listSteps('run-l5')).map((s) => s.output)).toEqual([output]);
        expect((await rt.idempotency.getRecord(key))?.output).toEqual({ output, usage: { inputTokens: 1, outputTokens: 2 } });
      });

      it('drops an output an earlier write left on the step record, so the step shows what was committed', async () => {
        const rt = get();
        await rt.runs.stepFinished('run-l6', 'draft', { status: 'SUCCEEDED', output: 'stale' });
        const key = keyOf('run-l6', 'draft', 6);
        await rt.idempotency.saveInProgress(key, claim('a'));
        await rt.idempotency.saveSuccess(key, { leaseId: 'a', output: { output: 'fresh' }, nowMs: Date.now(), ttlSeconds: 3600, step: { output: 'fresh' } });
        expect(await rawStep(rt, 'run-l6', 'draft')).not.toHaveProperty('output');
        expect(await rt.runs.getStep('run-l6', 'draft')).toMatchObject({ status: 'SUCCEEDED', output: 'fresh', attempts: 1 });
      });

      it('shows the output of another key committed later on the same step instance, and keeps the first key\'s', async () => {
        const rt = get();
        const first = keyOf('run-l7', 'tool', 1);
        const second = keyOf('run-l7', 'tool', 2);
        await rt.idempotency.saveInProgress(first, claim('a'));
        await rt.idempotency.saveSuccess(first, { leaseId: 'a', output: { output: 'one' }, nowMs: Date.now(), ttlSeconds: 3600, step: { output: 'one' } });
        await rt.idempotency.saveInProgress(second, claim('b'));
        expect((await rt.runs.getStep('run-l7', 'tool'))?.output).toBeUndefined();
        await rt.idempotency.saveSuccess(second, { leaseId: 'b', output: { output: 'two' }, nowMs: Date.now(), ttlSeconds: 3600, step: { output: 'two' } });
        expect(await rt.runs.getStep('run-l7', 'tool')).toMatchObject({ status: 'SUCCEEDED', output: 'two', attempts: 2 });
        expect((await rt.idempotency.getRecord(first))?.output).toEqual({ output: 'one' });
        expect((await rt.idempotency.getRecord(second))?.output).toEqual({ output: 'two' });
      });
    });

    describe('Method: deleteRecord', () => {
      it('removes the idempotency record and keeps the step record', async () => {
        const rt = get();
        const key = keyOf('run-l4', 'judge', 4);
        await rt.idempotency.saveInProgress(key, claim('a'));
        await rt.idempotency.deleteRecord(key, { leaseId: 'a' });
        expect(await rt.idempotency.getRecord(key)).toBeUndefined();
        expect((await rt.runs.getStep('run-l4', 'judge'))?.attempts).toBe(1);
        await rt.idempotency.saveInProgress(key, claim('b'));
        expect((await rt.runs.getStep('run-l4', 'judge'))?.attempts).toBe(2);
      });
    });
  });

  describe(`Class: RunStore (${label})`, () => {
    it('returns the same run for the same idempotency key', async () => {
      const rt = get();
      const a = await rt.runs.startRun({ workflow: 'wf', idempotencyKey: 'key-1', input: { x: 1 } });
      const b = await rt.runs.startRun({ workflow: 'wf', idempotencyKey: 'key-1', input: { x: 2 } });
      expect(a.reused).toBe(false);
      expect(b.reused).toBe(true);
      expect(b.run.runId).toBe(a.run.runId);
      expect(b.run.input).toEqual({ x: 1 });
    });

    it('lists runs by workflow and by status through the indexes, newest first', async () => {
      const rt = get();
      const r1 = (await rt.runs.startRun({ workflow: 'alpha' })).run;
      await new Promise((r) => setTimeout(r, 5));
      const r2 = (await rt.runs.startRun({ workflow: 'alpha' })).run;
      const r3 = (await rt.runs.startRun({ workflow: 'beta' })).run;
      await rt.runs.finishRun(r1.runId, { status: 'SUCCEEDED', output: { ok: true } });
      expect((await rt.runs.listRuns({ workflow: 'alpha' })).map((r) => r.runId)).toEqual([r2.runId, r1.runId]);
      expect((await rt.runs.listRuns({ workflow: 'alpha', status: 'SUCCEEDED' })).map((r) => r.runId)).toEqual([r1.runId]);
      const running = (await rt.runs.listRuns({ status: 'RUNNING' })).map((r) => r.runId);
      expect(running).toContain(r3.runId);
      expect(running).not.toContain(r1.runId);
      expect((await rt.runs.getRun(r1.runId))?.output).toEqual({ ok: true });
    });

    it('records steps with attempts, outputs and errors', async () => {
      const rt = get();
      await rt.runs.stepStarted('run-s', 'plan');
      await rt.runs.stepStarted('run-s', 'plan');
      await rt.runs.stepFinished('run-s', 'plan', { status: 'SUCCEEDED', output: 'done', usage: { inputTokens: 3, outputTokens: 4 } });
      await rt.runs.stepFinished('run-s', 'judge', { status: 'FAILED', error: { name: 'ToolError', message: 'x' } });
      const steps = await rt.runs.listSteps('run-s');
      expect(steps.map((s) => [s.stepId, s.status, s.attempts ?? 0])).toEqual([['judge', 'FAILED', 0], ['plan', 'SUCCEEDED', 2]]);
    });
  });

  describe(`Lookups by an id no record can have (${label})`, () => {
    it('find nothing for an id over the longest a run or approval id can be, rather than failing on the key size', async () => {
      const rt = get();
      const long = 'r'.repeat(3000);
      expect(await rt.runs.getRun(long)).toBeUndefined();
      expect(await rt.approvals.get(long)).toBeUndefined();
      expect(await rt.runs.getRun('')).toBeUndefined();
      const err = await rt.approvals.decide(long, { decision: 'APPROVED' }).catch((e: unknown) => e as Error);
      expect((err as Error).name).toBe('NotFound');
    });
  });

  describe(`Class: ApprovalStore (${label})`, () => {
    it('lists pending approvals and accepts only the first decision', async () => {
      const rt = get();
      const { record: a, created } = await rt.approvals.request({ runId: 'r', stepId: 's', tool: 'shell', args: { command: 'ls' }, taskToken: 'tok', timeoutSeconds: 60, envelope: '{"secret":"kept for the decision only"}' });
      expect(created).toBe(true);
      expect(a.approvalId).toBe(approvalIdFor('tok'));
      const listed = await rt.approvals.list('PENDING');
      expect(listed.map((x) => x.approvalId)).toContain(a.approvalId);
      expect(listed.find((x) => x.approvalId === a.approvalId)).not.toHaveProperty('envelope');
      const d = await rt.approvals.decide(a.approvalId, { decision: 'APPROVED', by: 'alice' });
      expect(d.status).toBe('APPROVED');
      const again = await rt.approvals.decide(a.approvalId, { decision: 'REJECTED' }).catch((e: unknown) => e);
      expect((again as Error).name).toBe('PolicyDenied');
      expect((again as Error).message).toContain('already decided (APPROVED)');
      expect((await rt.approvals.list('PENDING')).map((x) => x.approvalId)).not.toContain(a.approvalId);
    });

    it('records one approval per task token: asking again returns it as it is now', async () => {
      const rt = get();
      const ask = () => rt.approvals.request({ runId: 'r2', stepId: 's', tool: 'shell', args: { command: 'ls' }, taskToken: 'tok-2', timeoutSeconds: 60 });
      const first = await ask();
      const second = await ask();
      expect(second).toEqual({ record: first.record, created: false, announced: false });
      await rt.approvals.announced(first.record.approvalId);
      const announced = await ask();
      expect(announced).toEqual({ record: first.record, created: false, announced: true });
      expect(announced.record).not.toHaveProperty('announcedAt');
      await rt.approvals.decide(first.record.approvalId, { decision: 'REJECTED', by: 'bob', reason: 'no' });
      const third = await ask();
      expect(third.created).toBe(false);
      expect(third.record).toMatchObject({ approvalId: first.record.approvalId, status: 'REJECTED', decidedBy: 'bob', reason: 'no' });
      expect(third.record).not.toHaveProperty('envelope');
      expect((await rt.approvals.list('PENDING')).filter((x) => x.runId === 'r2')).toEqual([]);
    });
  });

  describe(`Class: BlobStore (${label})`, () => {
    it('stores a large output by reference and resolves it transparently', async () => {
      const rt = get();
      const big = { text: 'x'.repeat(700_000) };
      const stored = await rt.blobs.maybeStore(big, 1024);
      expect(stored.ref?.bytes).toBeGreaterThan(700_000);
      expect(await rt.blobs.resolveRefs({ prev: stored.value, n: 1 })).toEqual({ prev: big, n: 1 });
      expect((await rt.blobs.maybeStore({ small: 1 }, 1024)).ref).toBeUndefined();
    });

    it('puts the stored value in place of a reference that a template rendered into text', async () => {
      const rt = get();
      const text = 'y'.repeat(5_000);
      const obj = { rows: [1, 2, 3], note: 'z'.repeat(5_000) };
      const a = await rt.blobs.maybeStore(text, 1024);
      const b = await rt.blobs.maybeStore(obj, 1024);
      // As the compiled ASL renders a template that places step values in text.
      const rendered = await jsonata('"Summarise " & $string($a) & " and " & $string($b) & "."').evaluate({}, { a: a.value, b: b.value }) as string;
      expect(rendered).toContain('{"$ref":{"ref":');
      expect(await rt.blobs.resolveRefs({ value: rendered })).toEqual({ value: `Summarise ${text} and ${JSON.stringify(obj)}.` });
      // Text that only looks like a reference (no such blob shape) stays as it is.
      const lookalike = 'see {"$ref":{"ref":"x","bytes":1,"sha256":"short"}}';
      expect(await rt.blobs.resolveRefs(lookalike)).toBe(lookalike);
    });
  });
}
