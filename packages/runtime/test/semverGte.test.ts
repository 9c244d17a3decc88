// The bundles' semver `gte` (in X-Ray's place of the whole package) agrees with semver's own.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { gte } from '../src/bundled/semverGte.js';

const semver = createRequire(import.meta.url)('semver') as { gte(a: string, b: string): boolean };

const VERSIONS = [
  '0.0.0',
  '0.0.1',
  '0.1.0',
  '1.0.0-alpha',
  '1.0.0-alpha.1',
  '1.0.0-alpha.beta',
  '1.0.0-beta',
  '1.0.0-beta.2',
  '1.0.0-beta.11',
  '1.0.0-rc.1',
  '1.0.0',
  '1.0.0+build.5',
  'v1.0.1',
  '2.7.15',
  '2.7.9',
  '2.10.0',
  '2.1600.0',
  '10.0.0-0',
  '10.0.0-1a',
  '10.0.0',
];

describe('Function: gte (bundled semver)', () => {
  it('orders every pair of versions as semver does (SemVer 2.0.0 precedence)', () => {
    for (const a of VERSIONS) for (const b of VERSIONS) expect(gte(a, b), `${a} >= ${b}`).toBe(semver.gte(a, b));
  });

  it('refuses what is no version, as semver does', () => {
    expect(() => semver.gte('2.x', '1.0.0')).toThrow('Invalid Version: 2.x');
    expect(() => gte('2.x', '1.0.0')).toThrow(expect.objectContaining({ name: 'InvalidInput', message: 'Invalid Version: 2.x' }));
  });
});
