// Signature Version 4 recomputed from a request as a server received it, per the AWS documentation
// (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html), independently of
// the SDK's signer and of aws4: the tests compare the signature a client sent with this one.
import { createHash, createHmac } from 'node:crypto';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const hmac = (key: Buffer | string, s: string) => createHmac('sha256', key).update(s, 'utf8').digest();
const rfc3986 = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** What the signature covers: the request line, the headers it names, and the body. */
export interface ReceivedRequest {
  readonly method: string;
  /** Path and query as sent, e.g. `/` or `/x?b=2&a=1`. */
  readonly url: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** The signature a request's Authorization header should carry, for its SignedHeaders and X-Amz-Date. */
export function expectedSigV4(r: ReceivedRequest, scope: { region: string; service: string; secretAccessKey: string }): string {
  const auth = String(r.headers.authorization);
  const signedHeaders = /SignedHeaders=([^,]+)/.exec(auth)![1]!.split(';');
  const amzDate = String(r.headers['x-amz-date']);
  const date = amzDate.slice(0, 8);
  const [path, query = ''] = r.url.split('?');
  const canonicalQuery = query
    ? query
        .split('&')
        .map((p) => p.split('=').map((x) => rfc3986(decodeURIComponent(x))) as [string, string?])
        .sort(([a, av = ''], [b, bv = '']) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
        .map(([k, v = '']) => `${k}=${v}`)
        .join('&')
    : '';
  const canonical = [
    r.method,
    path,
    canonicalQuery,
    ...signedHeaders.map((h) => `${h}:${String(r.headers[h]).trim()}`),
    '',
    signedHeaders.join(';'),
    sha256(r.body),
  ].join('\n');
  const credentialScope = `${date}/${scope.region}/${scope.service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, credentialScope, sha256(canonical)].join('\n');
  let key = hmac(`AWS4${scope.secretAccessKey}`, date);
  for (const part of [scope.region, scope.service, 'aws4_request']) key = hmac(key, part);
  return hmac(key, toSign).toString('hex');
}

/** The signature an Authorization header carries. */
export function sentSignature(headers: ReceivedRequest['headers']): string | undefined {
  return /Signature=([0-9a-f]{64})/.exec(String(headers.authorization))?.[1];
}
