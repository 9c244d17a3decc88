// EventBridge rules from the workflows' `triggers:` → the trigger queue → the starter Lambda.
import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { WorkflowSpec } from '../workflows/WorkflowSpec.js';

/** Options for WorkflowTriggers. */
export interface WorkflowTriggersProps {
  readonly workflows: readonly WorkflowSpec[];
  readonly queue: sqs.IQueue;
  readonly starter: lambda.IFunction;
}

/**
 * The message every rule puts on the trigger queue (what packages/runtime/src/handlers/trigger.ts reads):
 * `workflow` picks the state machine, `input` (the event's detail) is the run input, and
 * `idempotencyKey` is EventBridge's event id, so a redelivered event never starts a second run.
 */
export const TRIGGER_MESSAGE_FIELDS = ['workflow', 'trigger', 'idempotencyKey', 'input', 'event'] as const;

/** Rules for every trigger, plus the queue → starter event source with partial batch failures. */
export class WorkflowTriggers extends Construct {
  readonly rules: events.Rule[] = [];

  constructor(scope: Construct, id: string, props: WorkflowTriggersProps) {
    super(scope, id);
    const buses = new Map<string, events.IEventBus>();
    for (const wf of props.workflows) {
      for (const trigger of wf.triggers) {
        let bus: events.IEventBus | undefined;
        if (trigger.eventBus) {
          bus = buses.get(trigger.eventBus);
          if (!bus) {
            bus = events.EventBus.fromEventBusName(this, `Bus-${trigger.eventBus}`, trigger.eventBus);
            buses.set(trigger.eventBus, bus);
          }
        }
        const rule = new events.Rule(this, `${wf.name}-${trigger.name}`, {
          description: trigger.description ?? `Starts Stepforge workflow ${wf.name} (${wf.file}, trigger ${trigger.name})`,
          eventBus: bus,
          // EventBridge's own JSON pattern, as written in the document (keys like detail-type pass through).
          eventPattern: trigger.eventPattern as events.EventPattern,
        });
        rule.addTarget(
          new targets.SqsQueue(props.queue, {
            // The trigger handler's message: the event's detail is the run input and the EventBridge
            // event id the idempotency key; the envelope fields are kept for the run record.
            message: events.RuleTargetInput.fromObject({
              workflow: wf.name,
              trigger: trigger.name,
              idempotencyKey: events.EventField.eventId,
              input: events.EventField.fromPath('$.detail'),
              event: {
                id: events.EventField.eventId,
                source: events.EventField.source,
                'detail-type': events.EventField.detailType,
                time: events.EventField.time,
              },
            }),
            retryAttempts: 8,
            maxEventAge: Duration.hours(24),
          }),
        );
        this.rules.push(rule);
      }
    }
    props.starter.addEventSource(
      new SqsEventSource(props.queue, { batchSize: 10, maxBatchingWindow: Duration.seconds(1), reportBatchItemFailures: true }),
    );
  }
}
