import aws4 from 'aws4';
import { buildQueryString, type SdkHttpRequest } from './LoopbackHttpHandler.js';

/** The credentials the SDK resolves for the `aws.auth#sigv4` scheme. */
export interface SigV4Identity {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/**
 * What the SDK's auth-scheme resolution hands a signer: the scheme option's signing name and region
 * (`name`, `region`), or the endpoint's (`signingName`, `signingRegion`) when it names them.
 */
export interface SigV4SigningProperties {
  readonly name?: string;
  readonly region?: string;
  readonly signingName?: string;
  readonly signingRegion?: string;
}

/**
 * An SDK HttpSigner for the `aws.auth#sigv4` auth scheme (the client option `httpAuthSchemes`) that
 * signs with the aws4 library: Signature Version 4 over the method, path, query, every header but
 * the unsignable ones, and the payload's SHA-256, as AWS documents it, so the embedded stack's
 * requests carry the same Authorization and X-Amz-Date headers as the cloud's (a test recomputes
 * each signature independently). It replaces the SDK's own signer on the loopback clients only,
 * where that signer's general machinery (a SignatureV4 built per request, clock-skew tracking
 * against a server clock, event-stream and S3 cases) cost a request more than the emulator's
 * answer; handlers on AWS keep the SDK's. The payload must be text or bytes (the JSON protocols
 * the embedded stack speaks): a streamed one is refused rather than signed unsigned.
 */
export class Aws4HttpSigner {
  async sign<R extends SdkHttpRequest>(request: R, resolved: object, signingProperties: Record<string, unknown>): Promise<R> {
    const identity = resolved as Partial<SigV4Identity>;
    if (typeof identity.accessKeyId !== 'string' || typeof identity.secretAccessKey !== 'string') {
      throw new Error('Aws4HttpSigner needs AWS credentials (accessKeyId and secretAccessKey)');
    }
    const properties = signingProperties as SigV4SigningProperties;
    const service = properties.signingName ?? properties.name;
    const region = properties.signingRegion ?? properties.region;
    if (!service || !region) throw new Error('Aws4HttpSigner needs a signing name and region');
    const body = request.body;
    if (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof Uint8Array)) {
      throw new Error('Aws4HttpSigner signs text or byte payloads only, not a stream');
    }
    const query = request.query ? buildQueryString(request.query) : '';
    const headers: Record<string, string> = { ...request.headers, 'x-amz-date': amzDate(new Date()) };
    const signed = aws4.sign(
      {
        service,
        region,
        method: request.method,
        host: headers.host ?? request.hostname,
        path: query ? `${request.path}?${query}` : request.path,
        headers,
        ...(body !== undefined && body !== null
          ? { body: Buffer.isBuffer(body) || typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength) }
          : {}),
      },
      {
        accessKeyId: identity.accessKeyId,
        secretAccessKey: identity.secretAccessKey,
        ...(identity.sessionToken ? { sessionToken: identity.sessionToken } : {}),
      },
    );
    // Send exactly what was signed: aws4 adds Authorization, and whatever it signed that was missing
    // (Content-Length of the body, X-Amz-Security-Token), under its own capitalisation.
    for (const [name, value] of Object.entries(signed.headers ?? {})) headers[name.toLowerCase()] = String(value);
    // The same request (its class, so the SDK still knows it for an HttpRequest) with the new headers.
    return Object.assign(Object.create(Object.getPrototypeOf(request) as object) as R, request, { headers });
  }
}

/** `YYYYMMDDTHHMMSSZ`, the X-Amz-Date format. */
function amzDate(d: Date): string {
  return d.toISOString().replace(/[:-]|\.\d{3}/g, '');
}
