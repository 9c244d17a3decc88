import { describe, expect, it } from 'vitest';
import { API_BODIES, parseApiBody } from '../src/apiBodies.js';

describe('Function: parseApiBody', () => {
  it('refuses a start-run body that holds the input fields themselves, and says where they go', () => {
    const r = parseApiBody(API_BODIES.StartRunBody, JSON.stringify({ topic: 'tide pools', depth: 2 }));
    expect(r).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
    expect(!r.ok && r.error.message).toBe(
      'invalid request body: (body): Unrecognized keys: "topic", "depth" (the workflow\'s input goes under "input", e.g. {"input": {"topic": …, "depth": …}})',
    );
  });

  it('gives no such hint for a misspelt field beside the input, or on other routes', () => {
    const typo = parseApiBody(API_BODIES.StartRunBody, JSON.stringify({ input: { topic: 'x' }, idempotencyKye: 'k' }));
    expect(!typo.ok && typo.error.message).toBe('invalid request body: (body): Unrecognized key: "idempotencyKye"');
    const retry = parseApiBody(API_BODIES.RetryBody, JSON.stringify({ wiat: true }));
    expect(!retry.ok && retry.error.message).toBe('invalid request body: (body): Unrecognized key: "wiat"');
  });

  it('takes a blank body as {} and refuses text that is not JSON', () => {
    expect(parseApiBody(API_BODIES.StartRunBody, '  ')).toEqual({ ok: true, value: {} });
    const bad = parseApiBody(API_BODIES.StartRunBody, '{bad');
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid_json' } });
    expect(!bad.ok && bad.error.message).toMatch(/^the request body is not valid JSON: /);
  });

  it('refuses a cancel reason that is empty or only spaces, as runs cancel --reason does', () => {
    for (const reason of ['', '   ']) {
      const r = parseApiBody(API_BODIES.CancelBody, JSON.stringify({ reason }));
      expect(!r.ok && r.error.message).toBe(
        'invalid request body: reason: a reason must say why the run is cancelled (not only spaces); leave it out to record "cancelled by the user"',
      );
    }
    expect(parseApiBody(API_BODIES.CancelBody, JSON.stringify({ reason: 'not today' }))).toEqual({
      ok: true,
      value: { reason: 'not today' },
    });
  });
});
