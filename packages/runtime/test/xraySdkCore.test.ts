// The bundles' X-Ray API (in aws-xray-sdk-core's entry's place, under Powertools' Tracer) is the
// SDK's own, less what never runs in a Lambda, and starts a Lambda's facade segment as the SDK does.
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import AWSXRay, { initLambda } from '../src/bundled/xraySdkCore.js';

const require = createRequire(import.meta.url);
const sdk = require('aws-xray-sdk-core') as Record<string, unknown>;
const sdkLambda = require('aws-xray-sdk-core/dist/lib/env/aws_lambda') as { init(): void };
const ours = AWSXRay as unknown as Record<string, unknown>;

/** What Powertools' Tracer and its ProviderService take from the SDK (lib/esm/provider/ProviderService.js, Tracer.js). */
const TRACER_USES = [
  'captureAWSv3Client',
  'captureAsyncFunc',
  'captureFunc',
  'captureHTTPsGlobal',
  'getNamespace',
  'getSegment',
  'setSegment',
  'Segment',
  'Subsegment',
  'setContextMissingStrategy',
  'setDaemonAddress',
  'setLogger',
];

/** Left out of the bundles, each failing with a ConfigError that says so. */
const LEFT_OUT = ['config', 'captureAWS', 'captureAWSClient', 'capturePromise'];

const TRACE = (root: string, parent: string, sampled: 0 | 1) => `Root=1-${root};Parent=${parent};Sampled=${sampled}`;

afterEach(() => {
  delete process.env._X_AMZN_TRACE_ID;
});

describe('bundled X-Ray API', () => {
  it("gives the SDK's own functions and classes for everything it keeps, the Tracer's all among them", () => {
    const kept = Object.keys(ours).filter((k) => !LEFT_OUT.includes(k) && k !== 'plugins');
    for (const k of kept) expect([k, ours[k]]).toEqual([k, sdk[k]]);
    for (const k of kept) if (typeof ours[k] === 'function') expect(ours[k], k).toBe(sdk[k]);
    expect(TRACER_USES.filter((k) => typeof ours[k] !== 'function')).toEqual([]);
    // Nothing else of the SDK's API is missing: only its middleware (sampling incoming requests) and SQL data.
    expect(Object.keys(sdk).filter((k) => !(k in ours))).toEqual(['database', 'middleware']);
    expect(ours.plugins).toEqual({});
  });

  it.each(LEFT_OUT)('%s fails with a ConfigError saying the bundles leave it out', (k) => {
    expect(() => (ours[k] as () => unknown)()).toThrow(
      expect.objectContaining({ name: 'ConfigError', message: expect.stringContaining('is not in the Lambda bundles') }),
    );
  });

  it('starts a facade segment as the SDK does on Lambda, and follows each invocation’s trace header as it does', () => {
    const getSegment = AWSXRay.getSegment as unknown as () => Record<string, unknown> & { resolveLambdaTraceData(): void };
    const view = (s: Record<string, unknown>) => ({
      name: s.name,
      trace_id: s.trace_id,
      id: s.id,
      parent_id: s.parent_id,
      notTraced: s.notTraced,
      facade: s.facade,
      in_progress: s.in_progress,
      counter: s.counter,
      closed: (s.isClosed as () => boolean)(),
      methods: Object.keys(s)
        .filter((k) => typeof s[k] === 'function')
        .sort(),
    });
    process.env._X_AMZN_TRACE_ID = TRACE('5759e988-bd862e3fe1be46a994272793', '53995c3f42cd8ad8', 1);
    sdkLambda.init();
    const theirs = getSegment();
    initLambda();
    const mine = getSegment();
    expect(mine).not.toBe(theirs);
    expect(view(mine)).toEqual(view(theirs));
    expect(view(mine)).toMatchObject({ trace_id: '1-5759e988-bd862e3fe1be46a994272793', id: '53995c3f42cd8ad8', facade: true });
    for (const [header, notTraced] of [
      [TRACE('5759e988-bd862e3fe1be46a994272794', '1111111111111111', 0), true],
      [TRACE('5759e988-bd862e3fe1be46a994272795', '2222222222222222', 1), undefined],
    ] as const) {
      process.env._X_AMZN_TRACE_ID = header;
      theirs.resolveLambdaTraceData();
      mine.resolveLambdaTraceData();
      expect(view(mine)).toEqual(view(theirs));
      expect(mine.notTraced).toBe(notTraced);
    }
    // Recording on the facade itself is refused (a warning), as Lambda records the segment.
    expect((mine.addAnnotation as (k: string, v: string) => unknown)('k', 'v')).toBeUndefined();
    expect((mine.close as () => unknown)()).toBeUndefined();
  });
});
