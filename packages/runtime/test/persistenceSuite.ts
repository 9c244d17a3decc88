// The persistence suite, shared so it runs on dynalite and on DynamoDB Local.
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import jsonata from 'jsonata';
import { describe, expect, it, vi } from 'vitest';
import { approvalIdFor } from '../src/persistence/ApprovalStore.js';
import { IdempotencyItemAlreadyExistsError } from '../src/persistence/IdempotencyRecord.js';
import { markOutcomeUnknown, runIdempotent } from '../src/runtime/runIdempotent.js';
import type { Runtime } from '../src/runtime/Runtime.js';

/** A step record's item as stored, keys and `idem` included. */
async function rawStep(rt: Runtime, runId: string, stepId: string): Promise<Record<string, unknown>> {
  const r = await rt.db.doc.send(
    new GetCommand({ TableName: rt.db.tableName, Key: { pk: `RUN#${runId}`, sk: `STEP#${stepId}` }, ConsistentRead: true }),
  );
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
        await rt.idempotency.saveInProgress('k2', {
          leaseId: 'a',
          nowMs: now - 120_000,
          leaseSeconds: 1,
          ttlSeconds: 3600,
          idempotent: false,
        });
        await rt.idempotency.saveInProgress('k2', { leaseId: 'b', nowMs: now, leaseSeconds: 1, ttlSeconds: 3600, idempotent: false });
        expect((await rt.idempotency.getRecord('k2'))?.leaseId).toBe('b');
        await rt.idempotency.markDispatched('k2', { leaseId: 'b', nowMs: now, target: 'http POST https://x', idempotent: false });
        const err = await rt.idempotency
          .saveInProgress('k2', { leaseId: 'c', nowMs: now + 5_000, leaseSeconds: 1, ttlSeconds: 3600, idempotent: false })
          .catch((e: unknown) => e);
        expect((err as IdempotencyItemAlreadyExistsError).existingRecord.dispatchTarget).toBe('http POST https://x');
        // An idempotent caller may take it over.
        await rt.idempotency.saveInProgress('k2', {
          leaseId: 'd',
          nowMs: now + 5_000,
          leaseSeconds: 1,
          ttlSeconds: 3600,
          idempotent: true,
        });
        expect((await rt.idempotency.getRecord('k2'))?.leaseId).toBe('d');
      });

      it('treats a completed record past its expiry as EXPIRED and lets a new attempt claim it', async () => {
        const rt = get();
        const now = Date.now();
        await rt.idempotency.saveInProgress('k3', {
          leaseId: 'a',
          nowMs: now - 10_000_000,
          leaseSeconds: 60,
          ttlSeconds: 10,
          idempotent: false,
        });
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
        const a = await runIdempotent(opts, async () => {
          calls++;
          return { n: 42 };
        });
        const b = await runIdempotent(opts, async () => {
          calls++;
          return { n: 43 };
        });
        expect(a).toEqual({ value: { n: 42 }, reused: false });
        expect(b).toEqual({ value: { n: 42 }, reused: true });
        expect(calls).toBe(1);
      });

      it('refuses a concurrent attempt with StepInProgress', async () => {
        const rt = get();
        const opts = { layer: rt.idempotency, key: 'r2', clock: Date.now, leaseSeconds: 60, ttlSeconds: 3600 };
        let release!: () => void;
        const first = runIdempotent(
          opts,
          () =>
            new Promise<string>((r) => {
              release = () => r('first');
            }),
        );
        await new Promise((r) => setTimeout(r, 50));
        const second = await runIdempotent(opts, async () => 'second').catch((e: unknown) => e);
        expect((second as Error).name).toBe('StepInProgress');
        release();
        expect((await first).value).toBe('first');
      });

      // Embedded stack: a lease of an earlier generation of the stack's owner belongs to a process
      // that has ended (RuntimeConfig.leaseEpoch), on an IDEM# item or on a step record.
      for (const [where, key] of [
        ['IDEM# item', 'e1'],
        ['step record', 'run-e1:plan:000000000000000000000001'],
      ] as const) {
        it(`takes over a running lease of an earlier stack generation at once, on a ${where}, unless it dispatched a call that is not idempotent`, async () => {
          const rt = get();
          const held = (k: string, epoch: number) =>
            rt.idempotency.saveInProgress(k, {
              leaseId: `held-${k}`,
              nowMs: Date.now(),
              leaseSeconds: 900,
              ttlSeconds: 3600,
              idempotent: false,
              leaseEpoch: epoch,
            });
          const opts = (k: string, epoch: number) => ({
            layer: rt.idempotency,
            key: k,
            clock: Date.now,
            leaseSeconds: 900,
            ttlSeconds: 3600,
            leaseEpoch: epoch,
          });
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

      describe('a late claim (claimAfterMs)', () => {
        const late = (rt: Runtime, key: string, extra: object = {}) => ({
          layer: rt.idempotency,
          key,
          clock: Date.now,
          leaseSeconds: 60,
          ttlSeconds: 3600,
          claimAfterMs: 30,
          ...extra,
        });
        /** Counts the layer's writes of one kind while `run` runs. */
        const claimsDuring = async <T>(rt: Runtime, run: () => Promise<T>): Promise<{ result: T; claims: number }> => {
          const layer = rt.idempotency;
          const original = layer.saveInProgress;
          let claims = 0;
          layer.saveInProgress = function (this: typeof layer, ...args: Parameters<typeof original>) {
            claims++;
            return original.apply(this, args);
          };
          try {
            return { result: await run(), claims };
          } finally {
            layer.saveInProgress = original;
          }
        };

        it('commits a quick call in one write with no claim, and a later attempt gets that result', async () => {
          const rt = get();
          let onClaim = 0;
          const first = await claimsDuring(rt, () => runIdempotent(late(rt, 'lc1', { onClaim: () => onClaim++ }), async () => ({ n: 1 })));
          expect(first).toEqual({ result: { value: { n: 1 }, reused: false }, claims: 0 });
          expect(onClaim).toBe(1);
          expect(await rt.idempotency.getRecord('lc1')).toMatchObject({ status: 'COMPLETED', output: { n: 1 } });
          // The next attempt computes (it cannot know before its commit), finds the record there, and
          // returns what was committed, through the claim's rules.
          const second = await claimsDuring(rt, () => runIdempotent(late(rt, 'lc1'), async () => ({ n: 2 })));
          expect(second).toEqual({ result: { value: { n: 1 }, reused: true }, claims: 1 });
        });

        it('claims a call still running after claimAfterMs while it runs, so a concurrent attempt is refused', async () => {
          const rt = get();
          let release!: () => void;
          const first = runIdempotent(
            late(rt, 'lc2'),
            () =>
              new Promise<string>((r) => {
                release = () => r('first');
              }),
          );
          await expect.poll(async () => (await rt.idempotency.getRecord('lc2'))?.status, { timeout: 5000 }).toBe('INPROGRESS');
          const second = await runIdempotent(late(rt, 'lc2'), async () => 'second').catch((e: unknown) => e);
          expect((second as Error).name).toBe('StepInProgress');
          release();
          expect(await first).toEqual({ value: 'first', reused: false });
          expect(await rt.idempotency.getRecord('lc2')).toMatchObject({ status: 'COMPLETED', output: 'first' });
        });

        it('claims before a dispatch, and stops the call at the dispatch when another attempt has committed', async () => {
          const rt = get();
          const a = await runIdempotent(late(rt, 'lc3'), async (guard) => {
            await guard.dispatch('slack webhook');
            return (await rt.idempotency.getRecord('lc3'))?.dispatchTarget;
          });
          expect(a).toEqual({ value: 'slack webhook', reused: false });
          let after = 0;
          const b = await runIdempotent(late(rt, 'lc3'), async (guard) => {
            await guard.dispatch('slack webhook');
            after++;
            return 'again';
          });
          expect(b).toEqual({ value: 'slack webhook', reused: true });
          expect(after).toBe(0);
        });

        it('holds the claim before a write another attempt must not interleave with: hold() refuses while another attempt holds it', async () => {
          const rt = get();
          await rt.idempotency.saveInProgress('lc4', {
            leaseId: 'other',
            nowMs: Date.now(),
            leaseSeconds: 60,
            ttlSeconds: 3600,
            idempotent: false,
          });
          let wrote = 0;
          const err = await runIdempotent(late(rt, 'lc4'), async (guard) => {
            await guard.hold();
            wrote++;
            return 'x';
          }).catch((e: unknown) => e);
          expect((err as Error).name).toBe('StepInProgress');
          expect(wrote).toBe(0);
        });

        it('leaves no record after a quick failure, and deletes its claim after a slow one', async () => {
          const rt = get();
          const quick = await runIdempotent(late(rt, 'lc5'), async () => {
            throw new Error('quick boom');
          }).catch((e: unknown) => e);
          expect((quick as Error).message).toBe('quick boom');
          expect(await rt.idempotency.getRecord('lc5')).toBeUndefined();
          const slow = await runIdempotent(late(rt, 'lc6'), async () => {
            await expect.poll(async () => (await rt.idempotency.getRecord('lc6'))?.status, { timeout: 5000 }).toBe('INPROGRESS');
            throw new Error('slow boom');
          }).catch((e: unknown) => e);
          expect((slow as Error).message).toBe('slow boom');
          expect(await rt.idempotency.getRecord('lc6')).toBeUndefined();
        });

        it('with claimAfterMs 0, claims before the call as without it', async () => {
          const rt = get();
          await rt.idempotency.saveInProgress('lc7', {
            leaseId: 'other',
            nowMs: Date.now(),
            leaseSeconds: 60,
            ttlSeconds: 3600,
            idempotent: false,
          });
          let ran = 0;
          const err = await runIdempotent(late(rt, 'lc7', { claimAfterMs: 0 }), async () => {
            ran++;
            return 'x';
          }).catch((e: unknown) => e);
          expect((err as Error).name).toBe('StepInProgress');
          expect(ran).toBe(0);
        });
      });

      describe('a claim at dispatch (claimAtDispatch)', () => {
        const atDispatch = (rt: Runtime, key: string) => ({
          layer: rt.idempotency,
          key,
          clock: Date.now,
          leaseSeconds: 60,
          ttlSeconds: 3600,
          claimAtDispatch: true,
          committedStep: (v: unknown) => ({ output: v }),
        });
        /** Counts the layer's claims and separate dispatch markers while `run` runs. */
        const writesDuring = async <T>(rt: Runtime, run: () => Promise<T>): Promise<{ result: T; claims: number; marks: number }> => {
          const layer = rt.idempotency;
          const [claim, mark] = [layer.saveInProgress, layer.markDispatched];
          let claims = 0;
          let marks = 0;
          layer.saveInProgress = function (this: typeof layer, ...args: Parameters<typeof claim>) {
            claims++;
            return claim.apply(this, args);
          };
          layer.markDispatched = function (this: typeof layer, ...args: Parameters<typeof mark>) {
            marks++;
            return mark.apply(this, args);
          };
          try {
            return { result: await run(), claims, marks };
          } finally {
            layer.saveInProgress = claim;
            layer.markDispatched = mark;
          }
        };
        // A plain key (an IDEM# item) and a step key (the record on the step's item).
        for (const [kind, keyOf] of [
          ['plain key', (n: string) => `ad-${n}`],
          ['step key', (n: string) => `run-ad-${n}:call#${n}:${'0'.repeat(24)}`],
        ] as const) {
          it(`writes the claim and the dispatch marker in one write, held until the commit (${kind})`, async () => {
            const rt = get();
            const key = keyOf('1');
            const seen: unknown[] = [];
            const r = await writesDuring(rt, () =>
              runIdempotent(atDispatch(rt, key), async (guard) => {
                seen.push(await rt.idempotency.getRecord(key));
                await guard.dispatch('slack webhook');
                const held = await rt.idempotency.getRecord(key);
                seen.push(
                  held && {
                    status: held.status,
                    dispatchTarget: held.dispatchTarget,
                    dispatched: typeof held.dispatchedAt === 'number',
                    idempotent: held.idempotent,
                  },
                );
                return 'posted';
              }),
            );
            expect(r).toEqual({ result: { value: 'posted', reused: false }, claims: 1, marks: 0 });
            expect(seen).toEqual([
              undefined,
              { status: 'INPROGRESS', dispatchTarget: 'slack webhook', dispatched: true, idempotent: false },
            ]);
            expect(await rt.idempotency.getRecord(key)).toMatchObject({ status: 'COMPLETED', output: 'posted' });
          });

          it(`refuses to repeat a call whose attempt dispatched and never heard back (${kind})`, async () => {
            const rt = get();
            const key = keyOf('2');
            const first = await runIdempotent(atDispatch(rt, key), async (guard) => {
              await guard.dispatch('http POST https://example.invalid/hook');
              throw markOutcomeUnknown(new Error('socket hang up'));
            }).catch((e: unknown) => e);
            expect((first as Error).name).toBe('StepOutcomeUnknown');
            let called = 0;
            const second = await runIdempotent(atDispatch(rt, key), async (guard) => {
              await guard.dispatch('http POST https://example.invalid/hook');
              called++;
              return 'again';
            }).catch((e: unknown) => e);
            expect({ name: (second as Error).name, called }).toEqual({ name: 'StepOutcomeUnknown', called: 0 });
            expect((second as Error).message).toContain('called http POST https://example.invalid/hook at ');
          });

          it(`stops at the dispatch while another attempt holds the step, and returns a commit found there (${kind})`, async () => {
            const rt = get();
            const key = keyOf('3');
            await rt.idempotency.saveInProgress(key, {
              leaseId: 'other',
              nowMs: Date.now(),
              leaseSeconds: 60,
              ttlSeconds: 3600,
              idempotent: false,
            });
            let called = 0;
            const busy = await runIdempotent(atDispatch(rt, key), async (guard) => {
              await guard.dispatch('shell: ls');
              called++;
              return 'x';
            }).catch((e: unknown) => e);
            expect({ name: (busy as Error).name, called }).toEqual({ name: 'StepInProgress', called: 0 });
            await rt.idempotency.saveSuccess(key, { leaseId: 'other', output: 'theirs', nowMs: Date.now(), ttlSeconds: 3600 });
            const reused = await runIdempotent(atDispatch(rt, key), async (guard) => {
              await guard.dispatch('shell: ls');
              called++;
              return 'mine';
            });
            expect({ reused, called }).toEqual({ reused: { value: 'theirs', reused: true }, called: 0 });
          });

          it(`commits a body that never dispatches in one write, with no claim (${kind})`, async () => {
            const rt = get();
            const key = keyOf('4');
            const r = await writesDuring(rt, () => runIdempotent(atDispatch(rt, key), async () => 'local only'));
            expect(r).toEqual({ result: { value: 'local only', reused: false }, claims: 0, marks: 0 });
            expect(await rt.idempotency.getRecord(key)).toMatchObject({ status: 'COMPLETED', output: 'local only' });
          });
        }
      });

      it('deletes the record after a definite failure so a retry runs again', async () => {
        const rt = get();
        const opts = { layer: rt.idempotency, key: 'r3', clock: Date.now, leaseSeconds: 60, ttlSeconds: 3600 };
        const err = await runIdempotent(opts, async () => {
          throw Object.assign(new Error('boom'), { name: 'ToolError' });
        }).catch((e: unknown) => e);
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
        expect(await rt.idempotency.getRecord(keyOf('run-l1', 'plan', 1))).toMatchObject({
          status: 'INPROGRESS',
          leaseId: 'a',
          runId: 'run-l1',
          stepId: 'plan',
        });
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
        await rt.idempotency.saveSuccess(keyOf('run-l2', 'tool', 2), {
          leaseId: 'b',
          output: { v: 2 },
          nowMs: Date.now(),
          ttlSeconds: 3600,
          step: { output: 'two' },
        });
        expect(await rt.idempotency.getRecord(keyOf('run-l2', 'tool', 2))).toMatchObject({ status: 'COMPLETED', output: { v: 2 } });
        expect(await rt.idempotency.getRecord(keyOf('run-l2', 'tool', 1))).toMatchObject({ status: 'INPROGRESS', leaseId: 'a' });
        expect(await rt.runs.getStep('run-l2', 'tool')).toMatchObject({ status: 'SUCCEEDED', output: 'two', attempts: 2 });
      });
    });

    describe('Method: saveSuccess', () => {
      it("commits the output and the step record's end in one write, and refuses a lost lease", async () => {
        const rt = get();
        const key = keyOf('run-l3', 'draft', 3);
        await rt.idempotency.saveInProgress(key, claim('a'));
        const lost = await rt.idempotency
          .saveSuccess(key, { leaseId: 'x', output: 1, nowMs: Date.now(), ttlSeconds: 3600 })
          .catch((e: unknown) => e);
        expect((lost as Error).name).toBe('IdempotencyLeaseLostError');
        await rt.idempotency.saveSuccess(key, {
          leaseId: 'a',
          output: { output: 'text' },
          nowMs: Date.now(),
          ttlSeconds: 3600,
          step: { output: 'text', usage: { inputTokens: 1, outputTokens: 2 } },
        });
        expect(await rt.idempotency.getRecord(key)).toMatchObject({ status: 'COMPLETED', output: { output: 'text' } });
        const step = await rt.runs.getStep('run-l3', 'draft');
        expect(step).toMatchObject({ status: 'SUCCEEDED', output: 'text', usage: { inputTokens: 1, outputTokens: 2 }, attempts: 1 });
        expect(Object.keys(step ?? {})).not.toContain('idem');
      });
      it("keeps the step's output once, in the committed value, and the step record reads it from there", async () => {
        const rt = get();
        const key = keyOf('run-l5', 'draft', 5);
        const output = { text: 'x'.repeat(200), n: 5 };
        await rt.idempotency.saveInProgress(key, claim('a'));
        await rt.idempotency.saveSuccess(key, {
          leaseId: 'a',
          output: { output, usage: { inputTokens: 1, outputTokens: 2 } },
          nowMs: Date.now(),
          ttlSeconds: 3600,
          step: { output, usage: { inputTokens: 1, outputTokens: 2 } },
        });
        const raw = await rawStep(rt, 'run-l5', 'draft');
        expect(raw).not.toHaveProperty('output');
        expect(raw.idem).toMatchObject({ status: 'COMPLETED', output: { output } });
        expect(await rt.runs.getStep('run-l5', 'draft')).toMatchObject({
          status: 'SUCCEEDED',
          output,
          usage: { inputTokens: 1, outputTokens: 2 },
        });
        expect((await rt.runs.listSteps('run-l5')).map((s) => s.output)).toEqual([output]);
        expect((await rt.idempotency.getRecord(key))?.output).toEqual({ output, usage: { inputTokens: 1, outputTokens: 2 } });
      });

      it('drops an output an earlier write left on the step record, so the step shows what was committed', async () => {
        const rt = get();
        await rt.runs.stepFinished('run-l6', 'draft', { status: 'SUCCEEDED', output: 'stale' });
        const key = keyOf('run-l6', 'draft', 6);
        await rt.idempotency.saveInProgress(key, claim('a'));
        await rt.idempotency.saveSuccess(key, {
          leaseId: 'a',
          output: { output: 'fresh' },
          nowMs: Date.now(),
          ttlSeconds: 3600,
          step: { output: 'fresh' },
        });
        expect(await rawStep(rt, 'run-l6', 'draft')).not.toHaveProperty('output');
        expect(await rt.runs.getStep('run-l6', 'draft')).toMatchObject({ status: 'SUCCEEDED', output: 'fresh', attempts: 1 });
      });

      it("shows the output of another key committed later on the same step instance, and keeps the first key's", async () => {
        const rt = get();
        const first = keyOf('run-l7', 'tool', 1);
        const second = keyOf('run-l7', 'tool', 2);
        await rt.idempotency.saveInProgress(first, claim('a'));
        await rt.idempotency.saveSuccess(first, {
          leaseId: 'a',
          output: { output: 'one' },
          nowMs: Date.now(),
          ttlSeconds: 3600,
          step: { output: 'one' },
        });
        await rt.idempotency.saveInProgress(second, claim('b'));
        expect((await rt.runs.getStep('run-l7', 'tool'))?.output).toBeUndefined();
        await rt.idempotency.saveSuccess(second, {
          leaseId: 'b',
          output: { output: 'two' },
          nowMs: Date.now(),
          ttlSeconds: 3600,
          step: { output: 'two' },
        });
        expect(await rt.runs.getStep('run-l7', 'tool')).toMatchObject({ status: 'SUCCEEDED', output: 'two', attempts: 2 });
        expect((await rt.idempotency.getRecord(first))?.output).toEqual({ output: 'one' });
        expect((await rt.idempotency.getRecord(second))?.output).toEqual({ output: 'two' });
      });
    });

    describe('Method: saveUnclaimedSuccess', () => {
      /** A step item as stored, without what differs between two runs of the same step. */
      const comparable = (raw: Record<string, unknown>) => {
        const { pk: _pk, runId: _r, startedAt: _s, endedAt: _e, idem, ...rest } = raw;
        const { key: _k, leaseId: _l, leaseExpiresAt: _x, expiresAt: _y, completedAt: _c, ...idemRest } = idem as Record<string, unknown>;
        return { ...rest, idem: idemRest };
      };
      it('writes the step record a claim and its commit would leave, in one put, only where the step has no record', async () => {
        const rt = get();
        const output = { output: 'text', usage: { inputTokens: 1, outputTokens: 2 } };
        const step = { output: 'text', usage: { inputTokens: 1, outputTokens: 2 } };
        const claimed = keyOf('run-u1', 'draft', 1);
        await rt.idempotency.saveInProgress(claimed, claim('a'));
        await rt.idempotency.saveSuccess(claimed, { leaseId: 'a', output, nowMs: Date.now(), ttlSeconds: 3600, step });
        const unclaimed = keyOf('run-u2', 'draft', 1);
        const started = Date.now() - 5;
        const p = { leaseId: 'b', output, startedAtMs: started, nowMs: Date.now(), ttlSeconds: 3600, idempotent: false, step };
        expect(await rt.idempotency.saveUnclaimedSuccess(unclaimed, p)).toBe(true);
        const raw = await rawStep(rt, 'run-u2', 'draft');
        expect(comparable(raw)).toEqual(comparable(await rawStep(rt, 'run-u1', 'draft')));
        expect(raw).toMatchObject({
          runId: 'run-u2',
          startedAt: new Date(started).toISOString(),
          idem: { key: unclaimed, status: 'COMPLETED' },
        });
        expect(await rt.runs.getStep('run-u2', 'draft')).toMatchObject({ status: 'SUCCEEDED', output: 'text', attempts: 1 });
        // Any record there (here, the one just written) and the put is refused, changing nothing.
        expect(await rt.idempotency.saveUnclaimedSuccess(unclaimed, { ...p, leaseId: 'c', output: { output: 'other' } })).toBe(false);
        expect((await rt.idempotency.getRecord(unclaimed))?.output).toEqual(output);
        // A step record left by a failed attempt (no idempotency record on it) refuses it too.
        await rt.runs.stepFinished('run-u3', 'draft', { status: 'FAILED', error: { name: 'X', message: 'x' }, countAttempt: true });
        expect(await rt.idempotency.saveUnclaimedSuccess(keyOf('run-u3', 'draft', 1), p)).toBe(false);
      });

      it('commits a key that is not a step key on its IDEM# item, once', async () => {
        const rt = get();
        const p = { leaseId: 'a', output: { v: 1 }, startedAtMs: Date.now(), nowMs: Date.now(), ttlSeconds: 3600, idempotent: false };
        expect(await rt.idempotency.saveUnclaimedSuccess('u-generic', p)).toBe(true);
        expect(await rt.idempotency.getRecord('u-generic')).toMatchObject({ status: 'COMPLETED', output: { v: 1 }, leaseId: 'a' });
        expect(await rt.idempotency.saveUnclaimedSuccess('u-generic', { ...p, output: { v: 2 } })).toBe(false);
        expect((await rt.idempotency.getRecord('u-generic'))?.output).toEqual({ v: 1 });
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
      expect(steps.map((s) => [s.stepId, s.status, s.attempts ?? 0])).toEqual([
        ['judge', 'FAILED', 0],
        ['plan', 'SUCCEEDED', 2],
      ]);
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
      const { record: a, created } = await rt.approvals.request({
        runId: 'r',
        stepId: 's',
        tool: 'shell',
        args: { command: 'ls' },
        taskToken: 'tok',
        timeoutSeconds: 60,
        envelope: '{"secret":"kept for the decision only"}',
      });
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
      const ask = () =>
        rt.approvals.request({ runId: 'r2', stepId: 's', tool: 'shell', args: { command: 'ls' }, taskToken: 'tok-2', timeoutSeconds: 60 });
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

    it('reads a stored output from the table once, and hands every reader a copy of its own', async () => {
      const rt = get();
      const stored = await rt.blobs.maybeStore({ rows: ['r'.repeat(3_000)] }, 1024);
      const sent: string[] = [];
      const send = rt.db.commands.send.bind(rt.db.commands);
      const spy = vi.spyOn(rt.db.commands, 'send').mockImplementation(((command: { constructor: { name: string } }) => {
        sent.push(command.constructor.name);
        return send(command as never);
      }) as never);
      try {
        const first = (await rt.blobs.resolveRefs(stored.value)) as { rows: string[] };
        first.rows.push('changed by a reader');
        expect(await rt.blobs.resolveRefs(stored.value)).toEqual({ rows: ['r'.repeat(3_000)] });
        expect(sent.filter((n) => n === 'QueryCommand')).toEqual(['QueryCommand']);
      } finally {
        spy.mockRestore();
      }
    });

    it('puts the stored value in place of a reference that a template rendered into text', async () => {
      const rt = get();
      const text = 'y'.repeat(5_000);
      const obj = { rows: [1, 2, 3], note: 'z'.repeat(5_000) };
      const a = await rt.blobs.maybeStore(text, 1024);
      const b = await rt.blobs.maybeStore(obj, 1024);
      // As the compiled ASL renders a template that places step values in text.
      const rendered = (await jsonata('"Summarise " & $string($a) & " and " & $string($b) & "."').evaluate(
        {},
        { a: a.value, b: b.value },
      )) as string;
      expect(rendered).toContain('{"$ref":{"ref":');
      expect(await rt.blobs.resolveRefs({ value: rendered })).toEqual({ value: `Summarise ${text} and ${JSON.stringify(obj)}.` });
      // Text that only looks like a reference (no such blob shape) stays as it is.
      const lookalike = 'see {"$ref":{"ref":"x","bytes":1,"sha256":"short"}}';
      expect(await rt.blobs.resolveRefs(lookalike)).toBe(lookalike);
    });

    it('renders references inside a list or object placed in text as JSON, as the same list held inline is rendered', async () => {
      const rt = get();
      const first = 'p'.repeat(2_000);
      const second = { q: 'q'.repeat(2_000) };
      const a = await rt.blobs.maybeStore(first, 512);
      const b = await rt.blobs.maybeStore(second, 512);
      // A for_each's output (one value per iteration, some by reference), placed in a prompt.
      const list = [a.value, 'inline "quoted"', b.value, 3];
      const template = '"Sources: " & $string($l) & " | one: " & $string($l[0]) & " | in {braces}: {" & $string($o) & "}"';
      const rendered = (await jsonata(template).evaluate({}, { l: list, o: { k: a.value } })) as string;
      const inline = (await jsonata(template).evaluate({}, { l: [first, 'inline "quoted"', second, 3], o: { k: first } })) as string;
      expect(await rt.blobs.resolveRefs(rendered)).toBe(inline);
    });
  });
}
