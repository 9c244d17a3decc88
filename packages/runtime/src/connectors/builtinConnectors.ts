import { RuntimeError } from '../errors/RuntimeError.js';
import { markOutcomeUnknown } from '../runtime/runIdempotent.js';
import type { Connector } from './Connector.js';
import { sendHttp } from './postJson.js';
import type { Runtime } from '../runtime/Runtime.js';

/** The outbound policy of a URL a workflow supplies: the project's allow-list and private-network setting. */
function workflowUrlPolicy(rt: Runtime) {
  return { allowHosts: rt.config.tools.httpAllowHosts, allowPrivateNetworks: rt.config.tools.httpAllowPrivateNetworks ?? false };
}

/**
 * The outbound policy of a URL the deployment's own configuration names (the Slack API, its
 * webhook): any host, private ones too, but still never a metadata or link-local address.
 */
const CONFIGURED_URL_POLICY = { allowHosts: [], allowPrivateNetworks: true };

function str(input: Record<string, unknown>, key: string, what: string): string {
  const v = input[key];
  if (typeof v !== 'string' || v.length === 0) throw new RuntimeError('InvalidInput', `${what}: "${key}" must be a non-empty string`);
  return v;
}

function awsFailure(what: string, e: unknown): never {
  const name = (e as { name?: string }).name ?? 'Error';
  const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  if (status === undefined) {
    // No answer at all: the request may or may not have been applied.
    throw markOutcomeUnknown(new RuntimeError('ConnectorError', `${what}: ${(e as Error).message}`, { retryable: true, cause: e }));
  }
  throw new RuntimeError('ConnectorError', `${what}: ${name}: ${(e as Error).message}`, {
    retryable: status >= 500,
    details: { status, code: name },
  });
}

/** `http`: a webhook call that always sends an `Idempotency-Key` header (so it is safe to repeat). */
export const httpConnector: Connector = {
  name: 'http',
  actions: {
    request: {
      idempotent: (input) => input.idempotencyKey !== false,
      async run(input, ctx) {
        const url = str(input, 'url', 'http.request');
        const method = typeof input.method === 'string' ? input.method.toUpperCase() : 'POST';
        const key = typeof input.idempotencyKey === 'string' ? input.idempotencyKey : ctx.idempotencyKey;
        const headers: Record<string, string> = {
          ...(typeof input.headers === 'object' && input.headers !== null ? (input.headers as Record<string, string>) : {}),
          ...(input.idempotencyKey !== false ? { 'Idempotency-Key': key } : {}),
        };
        let body: string | undefined;
        if (input.body !== undefined && method !== 'GET') {
          body = typeof input.body === 'string' ? input.body : JSON.stringify(input.body);
          headers['content-type'] ??= typeof input.body === 'string' ? 'text/plain' : 'application/json';
        }
        await ctx.guard.dispatch(`http ${method} ${new URL(url).origin}${new URL(url).pathname}`, {
          idempotent: input.idempotencyKey !== false,
        });
        const r = await sendHttp('http.request', url, { method, headers, body }, workflowUrlPolicy(ctx.runtime));
        return { status: r.status, body: r.body, idempotencyKey: input.idempotencyKey !== false ? key : undefined };
      },
    },
  },
};

/** `slack.send_message`: Web API `chat.postMessage` with a bot token, or an incoming webhook. */
export const slackConnector: Connector = {
  name: 'slack',
  actions: {
    send_message: {
      idempotent: () => false,
      async run(input, ctx) {
        const text = str(input, 'text', 'slack.send_message');
        const cfg = ctx.runtime.config.connectors;
        const webhook = typeof input.webhookUrl === 'string' ? input.webhookUrl : cfg.slackWebhookUrl;
        const tokenRef = typeof input.token === 'string' ? input.token : cfg.slackToken;
        if (tokenRef) {
          const token = tokenRef.startsWith('$secret:') ? await ctx.runtime.secrets.resolve(tokenRef.slice(8)) : tokenRef;
          const channel = str(input, 'channel', 'slack.send_message');
          const url = `${cfg.slackApiUrl.replace(/\/$/, '')}/chat.postMessage`;
          await ctx.guard.dispatch(`slack chat.postMessage to ${channel}`);
          const r = await sendHttp(
            'slack.send_message',
            url,
            {
              headers: { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${token}` },
              body: JSON.stringify({ channel, text, ...(input.blocks ? { blocks: input.blocks } : {}) }),
            },
            CONFIGURED_URL_POLICY,
          );
          const b = r.body as { ok?: boolean; error?: string; ts?: string; channel?: string };
          if (!b || b.ok !== true)
            throw new RuntimeError('ConnectorError', `slack.send_message: Slack answered ${b?.error ?? 'not ok'}`, {
              details: { slackError: b?.error },
            });
          return { ok: true, channel: b.channel ?? channel, ts: b.ts };
        }
        if (!webhook)
          throw new RuntimeError(
            'ConfigError',
            'slack.send_message needs a bot token (STEPFORGE_SLACK_TOKEN) or an incoming webhook URL (STEPFORGE_SLACK_WEBHOOK_URL)',
          );
        const hookUrl = webhook.startsWith('$secret:') ? await ctx.runtime.secrets.resolve(webhook.slice(8)) : webhook;
        await ctx.guard.dispatch('slack incoming webhook');
        await sendHttp(
          'slack.send_message',
          hookUrl,
          {
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ text, ...(input.blocks ? { blocks: input.blocks } : {}) }),
          },
          typeof input.webhookUrl === 'string' ? workflowUrlPolicy(ctx.runtime) : CONFIGURED_URL_POLICY,
        );
        return { ok: true, via: 'webhook' };
      },
    },
  },
};

/** `sqs.send_message`: idempotent only for FIFO queues given a deduplication id. */
export const sqsConnector: Connector = {
  name: 'sqs',
  actions: {
    send_message: {
      idempotent: (input) => typeof input.deduplicationId === 'string',
      async run(input, ctx) {
        const queueUrl = str(input, 'queueUrl', 'sqs.send_message');
        const body = typeof input.body === 'string' ? input.body : JSON.stringify(input.body ?? null);
        // Loaded before the dispatch, as for EventBridge below.
        const [{ SendMessageCommand }, { sqsClient }] = await Promise.all([
          import('@aws-sdk/client-sqs'),
          import('../runtime/sqsClient.js'),
        ]);
        await ctx.guard.dispatch(`sqs SendMessage to ${queueUrl}`, { idempotent: typeof input.deduplicationId === 'string' });
        try {
          const r = await sqsClient(ctx.runtime).send(
            new SendMessageCommand({
              QueueUrl: queueUrl,
              MessageBody: body,
              ...(typeof input.groupId === 'string' ? { MessageGroupId: input.groupId } : {}),
              ...(typeof input.deduplicationId === 'string' ? { MessageDeduplicationId: input.deduplicationId } : {}),
              ...(typeof input.delaySeconds === 'number' ? { DelaySeconds: input.delaySeconds } : {}),
            }),
          );
          return { messageId: r.MessageId };
        } catch (e) {
          return awsFailure('sqs.send_message', e);
        }
      },
    },
  },
};

/** `eventbridge.put_events`: one or more entries; fails when any entry fails. */
export const eventBridgeConnector: Connector = {
  name: 'eventbridge',
  actions: {
    put_events: {
      idempotent: () => false,
      async run(input, ctx) {
        const raw = Array.isArray(input.entries) ? input.entries : [input];
        const entries = raw.map((e, i) => {
          const x = e as Record<string, unknown>;
          if (typeof x.source !== 'string' || typeof x.detailType !== 'string') {
            throw new RuntimeError('InvalidInput', `eventbridge.put_events: entry ${i} needs "source" and "detailType"`);
          }
          return {
            Source: x.source,
            DetailType: x.detailType,
            Detail: typeof x.detail === 'string' ? x.detail : JSON.stringify(x.detail ?? {}),
            ...(typeof x.eventBusName === 'string' ? { EventBusName: x.eventBusName } : {}),
          };
        });
        // Loaded here, before the dispatch: the EventBridge client is ~120 KB of SDK that a process
        // whose workflows send no event (every `stepforge run` of them) never needs to compile.
        const [{ PutEventsCommand }, { eventBridgeClient }] = await Promise.all([
          import('@aws-sdk/client-eventbridge'),
          import('../runtime/eventBridgeClient.js'),
        ]);
        await ctx.guard.dispatch(`eventbridge PutEvents (${entries.length} entries)`);
        let r;
        try {
          r = await eventBridgeClient(ctx.runtime).send(new PutEventsCommand({ Entries: entries }));
        } catch (e) {
          return awsFailure('eventbridge.put_events', e);
        }
        if ((r.FailedEntryCount ?? 0) > 0) {
          throw new RuntimeError('ConnectorError', `eventbridge.put_events: ${r.FailedEntryCount} of ${entries.length} entries failed`, {
            details: { entries: r.Entries },
          });
        }
        return { eventIds: (r.Entries ?? []).map((e) => e.EventId) };
      },
    },
  },
};

/** The built-in connectors by name. */
export const BUILTIN_CONNECTORS: Readonly<Record<string, Connector>> = {
  http: httpConnector,
  webhook: httpConnector,
  slack: slackConnector,
  sqs: sqsConnector,
  eventbridge: eventBridgeConnector,
};
