// What the Lambda bundles put where the AWS SDK clients import `@smithy/core/checksum` (aliased in
// infra/lib/bundling/handlerBundling.ts). The clients take their SHA-256 (request signing) and
// SQS its MD5 (message checks) from there; the module's Node classes fall back to pure-JavaScript
// hashes when node:crypto has none, and so bring them (~7 KiB of every handler) to a runtime whose
// crypto always has both. These are the SDK's Node classes over node:crypto alone, checked against
// the SDK's own in packages/runtime/test/nodeChecksums.test.ts.
import { createHash, createHmac, type BinaryLike, type Hash, type Hmac } from 'node:crypto';

/** What a hash takes (the SDK's SourceData). */
type SourceData = string | ArrayBuffer | ArrayBufferView;

function toBuffer(data: SourceData): string | Buffer {
  if (typeof data === 'string') return data;
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

function bytesOf(buf: Buffer): Uint8Array {
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

/** SHA-256, or HMAC-SHA-256 when given a secret. */
export class Sha256 {
  readonly digestLength = 32;
  readonly #secret: SourceData | undefined;
  #hash: Hash | Hmac;
  #finished = false;

  constructor(secret?: SourceData) {
    this.#secret = secret;
    this.#hash = this.#create();
  }

  update(data: SourceData): void {
    if (this.#finished) throw new Error('Attempted to update an already finished hash.');
    // As the SDK's: the data as given (a string, or a view on bytes; node:crypto refuses a bare ArrayBuffer).
    this.#hash.update(data as BinaryLike);
  }

  async digest(): Promise<Uint8Array> {
    // An HMAC is final once digested; a plain hash can go on (its copy is digested).
    if (this.#secret) {
      this.#finished = true;
      return bytesOf(this.#hash.digest());
    }
    return bytesOf((this.#hash as Hash).copy().digest());
  }

  reset(): void {
    this.#hash = this.#create();
    this.#finished = false;
  }

  #create(): Hash | Hmac {
    return this.#secret ? createHmac('sha256', toBuffer(this.#secret)) : createHash('sha256');
  }
}

/** MD5 (SQS checks the digests of the messages it is sent and gives). */
export class Md5 {
  readonly digestLength = 16;
  #hash = createHash('md5');

  update(data: SourceData): void {
    this.#hash.update(toBuffer(data));
  }

  async digest(): Promise<Uint8Array> {
    return bytesOf(this.#hash.copy().digest());
  }

  reset(): void {
    this.#hash = createHash('md5');
  }
}
