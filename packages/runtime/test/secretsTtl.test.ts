import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { runtimeConfigFromEnv } from '../src/config/RuntimeConfig.js';
import { Redactor } from '../src/secrets/Redactor.js';
import { SecretResolver } from '../src/secrets/SecretResolver.js';
import { json, startHttpServer } from './emulators.js';

let server: Awaited<ReturnType<typeof startHttpServer>>;
const values: Record<string, string> = { 'stepforge/openai-key': 'sk-first-value' };
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sf-secrets-ttl-'));
  // A loopback Secrets Manager: the JSON protocol's GetSecretValue, and its not-found error.
  server = await startHttpServer((req, res) => {
    expect(req.headers['x-amz-target']).toBe('secretsmanager.GetSecretValue');
    const id = (JSON.parse(req.body) as { SecretId: string }).SecretId;
    if (values[id] === undefined) {
      res.writeHead(400, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify({ __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." }));
      return;
    }
    json(res, 200, { Name: id, SecretString: values[id] });
  });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

function resolver(backend: string, ttl: string, extra: Record<string, string> = {}) {
  const env = {
    STEPFORGE_SECRETS_BACKEND: backend,
    STEPFORGE_SECRETS_TTL_SECONDS: ttl,
    STEPFORGE_SECRETSMANAGER_ENDPOINT: server.url,
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_REGION: 'us-east-1',
    ...extra,
  };
  return new SecretResolver(runtimeConfigFromEnv(env), new Redactor(), env);
}

describe('Class: SecretResolver', () => {
  describe('Method: resolve (Secrets Manager, through Powertools Parameters)', () => {
    it('reuses a value for the TTL and reads the rotated one after it', async () => {
      // Only the clock is faked (Powertools dates its cache with new Date()); sockets and timers are real.
      vi.useFakeTimers({ toFake: ['Date'] });
      let now = 1_800_000_000_000;
      vi.setSystemTime(now);
      const r = resolver('secretsmanager', '60');
      values['stepforge/openai-key'] = 'sk-first-value';
      expect(await r.resolve('stepforge/openai-key')).toBe('sk-first-value');
      const seen = server.requests.length;
      values['stepforge/openai-key'] = 'sk-rotated-value';
      vi.setSystemTime((now += 59_000));
      expect(await r.resolve('stepforge/openai-key')).toBe('sk-first-value');
      expect(server.requests.length).toBe(seen);
      vi.setSystemTime((now += 2_000));
      expect(await r.resolve('stepforge/openai-key')).toBe('sk-rotated-value');
      expect(server.requests.length).toBe(seen + 1);
    });

    it('answers SecretNotFound, naming the secret, for an id the store does not have', async () => {
      await expect(resolver('secretsmanager', '60').resolve('no/such')).rejects.toMatchObject({
        name: 'SecretNotFound',
        message: 'secret "no/such" is not defined (Secrets Manager secret "no/such")',
      });
    });
  });

  describe('Method: resolve (in a Lambda bundle built for one backend)', () => {
    it('refuses the other backend by name rather than reading nothing', async () => {
      // What esbuild's `define` makes of the bundle (handlerBundling.ts), here set at run time.
      vi.stubEnv('STEPFORGE_BUNDLED_SECRETS_BACKEND', 'secretsmanager');
      try {
        await expect(resolver('ssm', '60').resolve('stepforge/openai-key')).rejects.toMatchObject({
          name: 'ConfigError',
          message:
            "STEPFORGE_SECRETS_BACKEND is 'ssm', but this Lambda bundle was built with the secretsmanager store only: deploy with the backend the stack sets, or rebuild the bundle for 'ssm'",
        });
        // Its own backend still reads.
        values['stepforge/openai-key'] = 'sk-first-value';
        expect(await resolver('secretsmanager', '60').resolve('stepforge/openai-key')).toBe('sk-first-value');
      } finally {
        vi.unstubAllEnvs();
      }
    });
  });

  describe('Method: resolve (the secrets file)', () => {
    it('reads the file again once the TTL has passed', async () => {
      let now = 1_800_000_000_000;
      vi.spyOn(Date, 'now').mockImplementation(() => now);
      const file = join(dir, 'secrets.json');
      writeFileSync(file, JSON.stringify({ slack_token: 'xoxb-first' }));
      const r = resolver('env', '30', { STEPFORGE_SECRETS_FILE: file });
      expect(await r.resolve('slack_token')).toBe('xoxb-first');
      writeFileSync(file, JSON.stringify({ slack_token: 'xoxb-second' }));
      expect(await r.resolve('slack_token')).toBe('xoxb-first');
      now += 31_000;
      expect(await r.resolve('slack_token')).toBe('xoxb-second');
    });

    it('refuses a TTL that is not a number of seconds', () => {
      expect(() => runtimeConfigFromEnv({ STEPFORGE_SECRETS_TTL_SECONDS: 'soon' })).toThrowError(
        'STEPFORGE_SECRETS_TTL_SECONDS must be a non-negative number, got "soon"',
      );
    });
  });
});
