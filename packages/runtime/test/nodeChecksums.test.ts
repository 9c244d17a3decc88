// The bundles' SHA-256 and MD5 (in @smithy/core/checksum's place) give the SDK's own digests.
import { Md5 as SdkMd5, Sha256 as SdkSha256 } from '@smithy/core/checksum';
import { describe, expect, it } from 'vitest';
import { Md5, Sha256 } from '../src/bundled/nodeChecksums.js';

const INPUTS: (string | Uint8Array | ArrayBuffer)[] = [
  '',
  'hello',
  'naïve ☃ text',
  new Uint8Array([0, 1, 2, 255]),
  new Uint8Array([9, 8, 7, 6, 5, 4]).subarray(2, 5),
];

async function digests(make: () => { update(d: unknown): void; digest(): Promise<Uint8Array> }, inputs = INPUTS): Promise<string[]> {
  const out: string[] = [];
  for (const input of inputs) {
    const h = make();
    h.update(input);
    h.update('more');
    out.push(Buffer.from(await h.digest()).toString('hex'));
  }
  return out;
}

describe('bundled checksums', () => {
  it('hash as the SDK does: SHA-256, HMAC-SHA-256 with a string or byte secret, MD5', async () => {
    expect(await digests(() => new Sha256())).toEqual(await digests(() => new SdkSha256()));
    expect(await digests(() => new Sha256('key'))).toEqual(await digests(() => new SdkSha256('key')));
    expect(await digests(() => new Sha256(new Uint8Array([1, 2, 3])))).toEqual(
      await digests(() => new SdkSha256(new Uint8Array([1, 2, 3]))),
    );
    // MD5 takes a bare ArrayBuffer too; SHA-256 refuses it, as the SDK's does.
    const withBuffer = [...INPUTS, new Uint8Array([1, 2, 3]).buffer];
    expect(await digests(() => new Md5(), withBuffer)).toEqual(await digests(() => new SdkMd5(), withBuffer));
    expect(() => new Sha256().update(new ArrayBuffer(2))).toThrow(TypeError);
    expect(() => new SdkSha256().update(new ArrayBuffer(2) as never)).toThrow(TypeError);
    // FIPS 180-2's test vector, so that agreeing with the SDK is not agreeing on a wrong answer.
    const abc = new Sha256();
    abc.update('abc');
    expect(Buffer.from(await abc.digest()).toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('go on after a digest (a plain hash) and start again on reset; an HMAC is final once digested', async () => {
    const ours = new Sha256();
    const sdk = new SdkSha256();
    for (const h of [ours, sdk] as { update(d: string): void }[]) h.update('a');
    expect(await ours.digest()).toEqual(await sdk.digest());
    for (const h of [ours, sdk] as { update(d: string): void }[]) h.update('b');
    expect(await ours.digest()).toEqual(await sdk.digest());
    ours.reset();
    sdk.reset();
    expect(await ours.digest()).toEqual(await sdk.digest());
    const hmac = new Sha256('k');
    hmac.update('x');
    await hmac.digest();
    expect(() => hmac.update('y')).toThrow('Attempted to update an already finished hash.');
    expect([new Sha256().digestLength, new Md5().digestLength]).toEqual([32, 16]);
  });
});
