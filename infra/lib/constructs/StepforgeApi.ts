// The REST API of `stepforge serve`, on API Gateway: one Lambda proxy integration (the api handler),
// IAM authorization by default (API key or Cognito as options), request validation and throttling.
import { RemovalPolicy } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { API_ROUTES as CONTRACT_ROUTES, type ApiRoute as ContractRoute } from '@stepforge/contract';
import { StackLogGroup, type LogSettings } from './StackLogGroup.js';

/** How callers authenticate. */
export type ApiAuthMode = 'iam' | 'apiKey' | 'cognito';

/** Options for StepforgeApi. */
export interface StepforgeApiProps {
  readonly handler: lambda.IFunction;
  readonly auth: ApiAuthMode;
  /** Steady-state requests per second for the stage (default 50). */
  readonly rateLimit?: number;
  /** Burst (default 100). */
  readonly burstLimit?: number;
  readonly destroyOnRemoval?: boolean;
  /** The access log group's key and retention (the stack's); unencrypted with a year's retention without. */
  readonly logs?: Omit<LogSettings, 'destroyOnRemoval'>;
}

/** A route of the API: method, path, the JSON body model it validates (if any). */
export interface ApiRoute {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: 'StartRun' | 'Retry' | 'Restart' | 'Cancel' | 'ApprovalDecision';
}

/** The gateway's model of each contract body. */
const MODEL_OF: Readonly<Record<NonNullable<ContractRoute['body']>, NonNullable<ApiRoute['body']>>> = {
  StartRunBody: 'StartRun',
  RetryBody: 'Retry',
  RestartBody: 'Restart',
  CancelBody: 'Cancel',
  DecisionBody: 'ApprovalDecision',
};

/**
 * The routes of the contract's table (the ones `stepforge serve` and the api Lambda route by),
 * but the OpenAPI document, which `stepforge serve` answers and docs/openapi.json holds.
 */
export const API_ROUTES: readonly ApiRoute[] = CONTRACT_ROUTES.filter((r) => r.operation !== 'openApi').map((r) => ({
  method: r.method,
  path: r.path,
  ...(r.body !== undefined ? { body: MODEL_OF[r.body] } : {}),
}));

const JSON_OBJECT = { type: apigw.JsonSchemaType.OBJECT } as const;

/**
 * JSON schemas (draft-04, what API Gateway models use) for the request bodies: a first filter at
 * the gateway. The api Lambda then validates each body strictly with API_BODIES (@stepforge/contract),
 * the schemas `stepforge serve` uses, so the limits here are theirs and never refuse a body serve accepts.
 */
const BODY_SCHEMAS: Readonly<Record<NonNullable<ApiRoute['body']>, apigw.JsonSchema>> = {
  StartRun: {
    ...JSON_OBJECT,
    properties: {
      input: {},
      idempotencyKey: { type: apigw.JsonSchemaType.STRING, minLength: 1, maxLength: 256 },
    },
  },
  Retry: { ...JSON_OBJECT },
  Restart: {
    ...JSON_OBJECT,
    required: ['from'],
    properties: { from: { type: apigw.JsonSchemaType.STRING, minLength: 1, maxLength: 256 } },
  },
  Cancel: { ...JSON_OBJECT, properties: { reason: { type: apigw.JsonSchemaType.STRING, minLength: 1, maxLength: 2000 } } },
  ApprovalDecision: {
    ...JSON_OBJECT,
    required: ['decision'],
    properties: {
      decision: { type: apigw.JsonSchemaType.STRING, enum: ['approve', 'reject'] },
      comment: { type: apigw.JsonSchemaType.STRING, maxLength: 2000 },
    },
  },
};

/** API Gateway REST API in front of the api handler. */
export class StepforgeApi extends Construct {
  readonly api: apigw.RestApi;
  readonly userPool?: cognito.UserPool;
  readonly apiKey?: apigw.IApiKey;

  constructor(scope: Construct, id: string, props: StepforgeApiProps) {
    super(scope, id);
    const accessLogs = props.logs
      ? new StackLogGroup(this, 'AccessLogs', { ...props.logs, destroyOnRemoval: props.destroyOnRemoval })
      : new logs.LogGroup(this, 'AccessLogs', {
          retention: logs.RetentionDays.ONE_YEAR,
          removalPolicy: props.destroyOnRemoval ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
        });
    const rateLimit = props.rateLimit ?? 50;
    const burstLimit = props.burstLimit ?? 100;

    let authorizer: apigw.IAuthorizer | undefined;
    let authorizationType = apigw.AuthorizationType.IAM;
    if (props.auth === 'cognito') {
      this.userPool = new cognito.UserPool(this, 'Users', {
        selfSignUpEnabled: false,
        signInAliases: { email: true },
        mfa: cognito.Mfa.REQUIRED,
        mfaSecondFactor: { sms: false, otp: true },
        passwordPolicy: { minLength: 12, requireDigits: true, requireLowercase: true, requireUppercase: true, requireSymbols: true },
        featurePlan: cognito.FeaturePlan.PLUS,
        standardThreatProtectionMode: cognito.StandardThreatProtectionMode.FULL_FUNCTION,
        removalPolicy: props.destroyOnRemoval ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
      });
      authorizer = new apigw.CognitoUserPoolsAuthorizer(this, 'Authorizer', { cognitoUserPools: [this.userPool] });
      authorizationType = apigw.AuthorizationType.COGNITO;
    } else if (props.auth === 'apiKey') {
      authorizationType = apigw.AuthorizationType.NONE;
    }

    this.api = new apigw.RestApi(this, 'Api', {
      restApiName: 'stepforge',
      description: 'Stepforge runs, workflows and approvals (the `stepforge serve` API)',
      endpointTypes: [apigw.EndpointType.REGIONAL],
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: props.destroyOnRemoval ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
      deployOptions: {
        stageName: 'v1',
        throttlingRateLimit: rateLimit,
        throttlingBurstLimit: burstLimit,
        loggingLevel: apigw.MethodLoggingLevel.ERROR,
        // Request/response bodies can carry workflow data; keep them out of the execution logs.
        dataTraceEnabled: false,
        metricsEnabled: true,
        tracingEnabled: true,
        accessLogDestination: new apigw.LogGroupLogDestination(accessLogs),
        accessLogFormat: apigw.AccessLogFormat.jsonWithStandardFields(),
      },
      defaultMethodOptions: {
        authorizationType,
        authorizer,
        apiKeyRequired: props.auth === 'apiKey',
      },
    });

    // Errors API Gateway answers itself (a body its model refuses, missing auth, throttling) take the
    // API's own shape, {"error":{"code","message"}}, as the api Lambda's and `stepforge serve`'s do.
    // The templates are not VTL: messageString is already a quoted JSON string; responseType is a token.
    const gatewayError = (code: string) => ({ 'application/json': `{"error":{"code":"${code}","message":$context.error.messageString}}` });
    this.api.addGatewayResponse('BadRequestBody', {
      type: apigw.ResponseType.BAD_REQUEST_BODY,
      templates: gatewayError('invalid_request'),
    });
    this.api.addGatewayResponse('BadRequestParameters', {
      type: apigw.ResponseType.BAD_REQUEST_PARAMETERS,
      templates: gatewayError('invalid_request'),
    });
    this.api.addGatewayResponse('Default4xx', {
      type: apigw.ResponseType.DEFAULT_4XX,
      templates: gatewayError('$context.error.responseType'),
    });
    this.api.addGatewayResponse('Default5xx', {
      type: apigw.ResponseType.DEFAULT_5XX,
      templates: gatewayError('$context.error.responseType'),
    });

    const validator = new apigw.RequestValidator(this, 'Validator', {
      restApi: this.api,
      requestValidatorName: 'body-and-parameters',
      validateRequestBody: true,
      validateRequestParameters: true,
    });
    const models: Partial<Record<string, apigw.Model>> = {};
    const modelFor = (name: NonNullable<ApiRoute['body']>) =>
      (models[name] ??= new apigw.Model(this, `${name}Model`, {
        restApi: this.api,
        modelName: `${name}Body`,
        contentType: 'application/json',
        schema: { schema: apigw.JsonSchemaVersion.DRAFT4, title: `${name}Body`, ...BODY_SCHEMAS[name] },
      }));

    const integration = new apigw.LambdaIntegration(props.handler, { proxy: true });
    for (const route of API_ROUTES) {
      const resource = this.api.root.resourceForPath(route.path);
      const pathParams = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
      const requestParameters: Record<string, boolean> = Object.fromEntries(pathParams.map((p) => [`method.request.path.${p}`, true]));
      if (route.method === 'POST' && route.path === '/workflows/{name}/runs') {
        requestParameters['method.request.header.Idempotency-Key'] = false;
      }
      resource.addMethod(route.method, integration, {
        requestValidator: validator,
        requestParameters,
        requestModels: route.body ? { 'application/json': modelFor(route.body) } : undefined,
      });
    }

    if (props.auth === 'apiKey') {
      const plan = this.api.addUsagePlan('UsagePlan', {
        name: 'stepforge',
        throttle: { rateLimit, burstLimit },
        apiStages: [{ api: this.api, stage: this.api.deploymentStage }],
      });
      this.apiKey = this.api.addApiKey('ApiKey', { description: 'Stepforge API key (see docs/deploy.md)' });
      plan.addApiKey(this.apiKey);
    }
  }
}
