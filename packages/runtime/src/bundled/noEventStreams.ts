// What the Lambda bundles put where the AWS SDK imports `@smithy/core/event-streams` (aliased in
// infra/lib/bundling/handlerBundling.ts). Every SDK client's protocol loads the event-stream codec
// for operations whose input or output is an event stream (Bedrock's ConverseStream, S3 Select,
// Lambda's InvokeWithResponseStream), and Bedrock's client wires a marshaller for them when it is
// built: ~15 KiB of every handler, while no handler sends such an operation (the model step sends
// Converse). Here the client is built as the SDK builds it, and an event-stream operation, were one
// ever sent, fails with a ConfigError saying why instead of running without its codec.
import { RuntimeError } from '../errors/RuntimeError.js';

function noEventStreams(): never {
  throw new RuntimeError(
    'ConfigError',
    'the Lambda bundles carry no AWS event-stream codec (@smithy/core/event-streams): send the operation without a stream (Converse, not ConverseStream), or take the alias out of infra/lib/bundling/handlerBundling.ts',
  );
}

/** A marshaller that refuses to read or write an event stream. */
class NoEventStreamMarshaller {
  serialize(): never {
    return noEventStreams();
  }
  deserialize(): never {
    return noEventStreams();
  }
}

/** What a client's configuration takes as its event-stream marshaller's provider. */
export const eventStreamSerdeProvider = (_options?: unknown): NoEventStreamMarshaller => new NoEventStreamMarshaller();

/** As the SDK's: the client's configuration gets its marshaller from its provider. */
export const resolveEventStreamSerdeConfig = <T extends { eventStreamSerdeProvider: (input: T) => unknown }>(input: T) =>
  Object.assign(input, { eventStreamMarshaller: input.eventStreamSerdeProvider(input) });

/** What a protocol loads for an operation with an event stream. */
export class EventStreamSerde {
  constructor(_options?: unknown) {}
  serializeEventStream(): never {
    return noEventStreams();
  }
  deserializeEventStream(): never {
    return noEventStreams();
  }
}

/**
 * What Bedrock's client builds its bidirectional-stream handlers with when it is built: made, it
 * refuses to encode or decode a message.
 */
export class EventStreamCodec {
  constructor(_toUtf8?: unknown, _fromUtf8?: unknown) {}
  encode(): never {
    return noEventStreams();
  }
  decode(): never {
    return noEventStreams();
  }
  formatHeaders(): never {
    return noEventStreams();
  }
}

/** Used by Bedrock's WebSocket handler for a bidirectional stream only. */
export const iterableToReadableStream = (): never => noEventStreams();
/** Used by Bedrock's WebSocket handler for a bidirectional stream only. */
export const readableStreamToIterable = (): never => noEventStreams();
