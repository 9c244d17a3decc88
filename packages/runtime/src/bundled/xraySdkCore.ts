// What the Lambda bundles put where Powertools' Tracer imports `aws-xray-sdk-core` (aliased in
// infra/lib/bundling/handlerBundling.ts). The package's entry (dist/lib/aws-xray.js) requires all of
// the SDK, and a third of it never runs in a Lambda: the centralized and local sampling (rule and
// target pollers, the X-Ray service connector: Lambda decides sampling and the SDK only reads the
// trace header), the Express-style middleware that samples incoming requests, the EC2, ECS and
// Elastic Beanstalk plugins, the AWS SDK v2 patcher and the promise patcher (~25 KiB of every
// handler). This is the same API object built from the SDK's own modules, less those parts:
// every function here is the SDK's, so segments, subsegments, the daemon emitter, the HTTP and
// AWS SDK v3 capture behave as the SDK's do. Only the Lambda start-up (the SDK's env/aws_lambda.js,
// which requires the sampling middleware to switch it off) is written here, line for line but for
// that call. packages/runtime/test/xraySdkCore.test.ts checks it against the SDK's entry.
// That start-up is adapted from aws-xray-sdk-core 3.12.0, Copyright Amazon.com, Inc. or its affiliates,
// licensed under the Apache License 2.0 (node_modules/aws-xray-sdk-core/LICENSE).
import { RuntimeError } from '../errors/RuntimeError.js';
import capture from 'aws-xray-sdk-core/dist/lib/capture.js';
import contextUtils from 'aws-xray-sdk-core/dist/lib/context_utils.js';
import daemonConfig from 'aws-xray-sdk-core/dist/lib/daemon_config.js';
import logging from 'aws-xray-sdk-core/dist/lib/logger.js';
import aws3Patcher from 'aws-xray-sdk-core/dist/lib/patchers/aws3_p.js';
import httpPatcher from 'aws-xray-sdk-core/dist/lib/patchers/http_p.js';
import SegmentEmitter from 'aws-xray-sdk-core/dist/lib/segment_emitter.js';
import awsAttributes from 'aws-xray-sdk-core/dist/lib/segments/attributes/aws.js';
import Subsegment from 'aws-xray-sdk-core/dist/lib/segments/attributes/subsegment.js';
import TraceID from 'aws-xray-sdk-core/dist/lib/segments/attributes/trace_id.js';
import Segment from 'aws-xray-sdk-core/dist/lib/segments/segment.js';
import segmentUtils from 'aws-xray-sdk-core/dist/lib/segments/segment_utils.js';
import utils from 'aws-xray-sdk-core/dist/lib/utils.js';

const UNKNOWN = 'unknown';

/** What the SDK's entry has and the bundles do not: it fails saying so, rather than as an undefined function. */
function leftOut(name: string, instead: string): () => never {
  return () => {
    throw new RuntimeError('ConfigError', `aws-xray-sdk-core's ${name} is not in the Lambda bundles: ${instead}`);
  };
}

/** The context utilities' fields the SDK's Lambda start-up reads and replaces (not in its typings). */
type ContextInternals = typeof contextUtils & {
  enableManualMode: () => void;
  contextMissingStrategy: { contextMissing(message: string): void };
};

/** A segment as the Lambda start-up reshapes it into the facade of the invocation's segment. */
type FacadeSegment = Segment & Record<string, unknown> & { reset(): void; resolveLambdaTraceData(): void };

/** The trace header of the last invocation the facade took its ids from. */
let xAmznTraceIdPrev: string | null = null;

/**
 * The SDK's Lambda start-up (env/aws_lambda.js `init`), but for switching off centralized sampling:
 * no sampler is in the bundle to switch off. Each invocation's facade segment stands for the
 * segment Lambda itself records; subsegments hang from it.
 */
export function initLambda(): void {
  const ctx = contextUtils as ContextInternals;
  ctx.enableManualMode = function () {
    logging.getLogger().warn('AWS Lambda does not support AWS X-Ray manual mode.');
  };
  SegmentEmitter.disableReusableSocket();
  segmentUtils.setStreamingThreshold(0);
  const namespace = contextUtils.getNamespace();
  namespace.enter(namespace.createContext());
  contextUtils.setSegment(facadeSegment());
}

function facadeSegment(): Segment {
  const segment = new Segment('facade') as FacadeSegment;
  const whitelistFcn = [
    'addNewSubsegment',
    'addSubsegment',
    'removeSubsegment',
    'toString',
    'addSubsegmentWithoutSampling',
    'addNewSubsegmentWithoutSampling',
  ];
  const silentFcn = ['incrementCounter', 'decrementCounter', 'isClosed', 'close', 'format', 'flush'];
  const xAmznTraceId = process.env._X_AMZN_TRACE_ID;
  for (const key in segment) {
    if (typeof segment[key] === 'function' && whitelistFcn.indexOf(key) === -1) {
      if (silentFcn.indexOf(key) === -1) {
        segment[key] = function facade() {
          logging
            .getLogger()
            .warn('Function "' + key + '" cannot be called on an AWS Lambda segment. Please use a subsegment to record data.');
          return;
        };
      } else {
        segment[key] = function facade() {
          return;
        };
      }
    }
  }
  segment.trace_id = TraceID.Invalid().toString();
  segment.isClosed = function () {
    return true;
  };
  segment.in_progress = false;
  segment.counter = 1;
  segment.notTraced = true;
  segment.facade = true;
  segment.reset = function reset() {
    this.trace_id = TraceID.Invalid().toString();
    this.id = '00000000';
    delete this.subsegments;
    this.notTraced = true;
  };
  segment.resolveLambdaTraceData = function resolveLambdaTraceData() {
    const invokeStore = (globalThis as { awslambda?: { InvokeStore?: { getXRayTraceId(): string | undefined } } }).awslambda?.InvokeStore;
    const xAmznLambda = invokeStore?.getXRayTraceId() ?? process.env._X_AMZN_TRACE_ID;
    if (xAmznLambda) {
      // A new trace header resets the trace data, so that none leaks from one invocation to the next.
      if (xAmznLambda != xAmznTraceIdPrev) {
        this.reset();
        if (utils.LambdaUtils.populateTraceData(segment, xAmznLambda)) xAmznTraceIdPrev = xAmznLambda;
      }
    } else {
      this.reset();
      (contextUtils as ContextInternals).contextMissingStrategy.contextMissing(
        'Missing AWS Lambda trace data for X-Ray. ' +
          'Ensure Active Tracing is enabled and no subsegments are created outside the function handler.',
      );
    }
  };
  // Valid trace data at start-up is unlikely (this is the cold start, before an invocation's header).
  if (utils.LambdaUtils.validTraceData(xAmznTraceId)) {
    if (utils.LambdaUtils.populateTraceData(segment, xAmznTraceId as string)) xAmznTraceIdPrev = xAmznTraceId as string;
  }
  return segment;
}

/** The SDK's API object (dist/lib/aws-xray.js), less the parts that never run in a Lambda. */
const AWSXRay = {
  plugins: {},
  config: leftOut('config (the EC2, ECS and Elastic Beanstalk plugins)', 'a Lambda segment is recorded by Lambda itself'),
  setAWSWhitelist: awsAttributes.setAWSWhitelist,
  appendAWSWhitelist: awsAttributes.appendAWSWhitelist,
  setStreamingThreshold: segmentUtils.setStreamingThreshold,
  setLogger: logging.setLogger,
  getLogger: logging.getLogger,
  setDaemonAddress: daemonConfig.setDaemonAddress,
  captureFunc: capture.captureFunc,
  captureAsyncFunc: capture.captureAsyncFunc,
  captureCallbackFunc: capture.captureCallbackFunc,
  captureAWS: leftOut(
    'captureAWS (the AWS SDK v2 patcher)',
    'the handlers use the AWS SDK v3; capture its clients with captureAWSv3Client',
  ),
  captureAWSClient: leftOut(
    'captureAWSClient (the AWS SDK v2 patcher)',
    'the handlers use the AWS SDK v3; capture its clients with captureAWSv3Client',
  ),
  captureAWSv3Client: aws3Patcher.captureAWSClient,
  captureHTTPs: httpPatcher.captureHTTPs,
  captureHTTPsGlobal: httpPatcher.captureHTTPsGlobal,
  capturePromise: leftOut('capturePromise', 'a Lambda handler awaits its promises inside the invocation'),
  utils,
  getNamespace: contextUtils.getNamespace,
  resolveSegment: contextUtils.resolveSegment,
  resolveManualSegmentParams: contextUtils.resolveManualSegmentParams,
  getSegment: contextUtils.getSegment,
  setSegment: contextUtils.setSegment,
  isAutomaticMode: contextUtils.isAutomaticMode,
  enableAutomaticMode: contextUtils.enableAutomaticMode,
  enableManualMode: contextUtils.enableManualMode,
  setContextMissingStrategy: contextUtils.setContextMissingStrategy,
  Segment,
  Subsegment,
  SegmentUtils: segmentUtils,
};

// The SDK's entry reads its version from its package.json; the bundles set it at bundle time
// (handlerBundling.ts), and elsewhere it is unknown, as the entry has it when that file is missing.
segmentUtils.setSDKData({
  sdk: 'X-Ray for Node.js',
  sdk_version: process.env.STEPFORGE_BUNDLED_XRAY_SDK_VERSION ?? UNKNOWN,
  package: 'aws-xray-sdk-core',
});
segmentUtils.setServiceData({
  runtime: process.release?.name ? process.release.name : UNKNOWN,
  runtime_version: process.version,
  version: process.env.npm_package_version || UNKNOWN,
  name: process.env.npm_package_name || UNKNOWN,
});
if (process.env.LAMBDA_TASK_ROOT) initLambda();

export default AWSXRay;
