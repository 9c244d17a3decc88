import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { awsClientConfig } from '../config/awsClientConfig.js';
import type { Runtime } from './Runtime.js';

/** The Runtime's Bedrock runtime client (the `bedrock` model provider). */
export function bedrockClient(rt: Runtime): BedrockRuntimeClient {
  return rt.client('bedrock', (config) => {
    const endpoint = config.endpoints.bedrock;
    // The Bedrock runtime client defaults to HTTP/2; a plain-http endpoint (an emulator or a
    // gateway on loopback) speaks HTTP/1.1.
    return new BedrockRuntimeClient({
      ...awsClientConfig(config.region, endpoint),
      ...(endpoint?.startsWith('http:') ? { requestHandler: new NodeHttpHandler() } : {}),
    });
  });
}
