import { checkAliasName, parseStateMachineArn } from './arns.js';
import type { AliasRoute, ResourceTag, StateMachineAlias, StateMachineRecord, StateMachineVersion } from './ExecutionStore.js';
import { SfnApiError } from './SfnApiError.js';

// Versions, aliases and tags of one state machine, as pure functions over its record: the manager
// looks the record up, calls one of these and stores what comes back, so every change is one write
// of the record (versions and aliases live and die with their state machine, as on AWS, where
// DeleteStateMachine removes them too).

/** Quotas Step Functions applies per state machine. */
const MAX_VERSIONS = 1000;
const MAX_ALIASES = 100;
const MAX_TAGS = 50;
const MAX_DESCRIPTION = 256;

/** `arn:…:stateMachine:<name>:<version>`. */
export function versionArn(sm: StateMachineRecord, version: number): string {
  return `${sm.stateMachineArn}:${version}`;
}

/** `arn:…:stateMachine:<name>:<alias>`. */
export function aliasArn(sm: StateMachineRecord, alias: string): string {
  return `${sm.stateMachineArn}:${alias}`;
}

/** The version `n` of `sm`, if it is published. */
export function findVersion(sm: StateMachineRecord, n: number): StateMachineVersion | undefined {
  return sm.versions?.find((v) => v.version === n);
}

/** The alias named `name` of `sm`, if any. */
export function findAlias(sm: StateMachineRecord, name: string): StateMachineAlias | undefined {
  return sm.aliases?.find((a) => a.name === name);
}

function checkDescription(d: unknown, field: string): string | undefined {
  if (d === undefined || d === null) return undefined;
  if (typeof d !== 'string' || d.length > MAX_DESCRIPTION) {
    throw new SfnApiError(
      'ValidationException',
      `1 validation error detected: Value at '${field}' failed to satisfy constraint: Member must be a string of at most ${MAX_DESCRIPTION} characters`,
    );
  }
  return d;
}

/**
 * PublishStateMachineVersion: a version of the current revision. Publishing a revision that already
 * has a version returns that version (with the same description; another one is a conflict), and
 * `revisionId`, when given, must be the current revision.
 */
export function publishVersion(
  sm: StateMachineRecord,
  req: { revisionId?: unknown; description?: unknown },
  now: number,
): { record: StateMachineRecord; version: StateMachineVersion } {
  const description = checkDescription(req.description, 'description');
  if (req.revisionId !== undefined && req.revisionId !== null && req.revisionId !== sm.revisionId) {
    throw new SfnApiError(
      'ConflictException',
      `Failed to publish the State Machine version: the revision '${String(req.revisionId)}' is not the current revision '${sm.revisionId}' of '${sm.stateMachineArn}' (it was updated since; describe it again and publish that revision)`,
    );
  }
  const existing = sm.versions?.find((v) => v.revisionId === sm.revisionId);
  if (existing) {
    if (description !== undefined && description !== existing.description) {
      throw new SfnApiError(
        'ConflictException',
        `Failed to publish the State Machine version: the current revision is already published as version ${existing.version} with another description; update the state machine first or publish without a description`,
      );
    }
    return { record: sm, version: existing };
  }
  if ((sm.versions?.length ?? 0) >= MAX_VERSIONS) {
    throw new SfnApiError(
      'ServiceQuotaExceededException',
      `The state machine '${sm.stateMachineArn}' has ${MAX_VERSIONS} versions, the most it may have: delete versions you no longer need (DeleteStateMachineVersion) before publishing another`,
    );
  }
  const number = (sm.lastVersion ?? 0) + 1;
  const version: StateMachineVersion = {
    version: number,
    revisionId: sm.revisionId,
    definition: sm.definition,
    roleArn: sm.roleArn,
    creationDate: now,
    ...(description !== undefined ? { description } : {}),
    ...(sm.loggingConfiguration !== undefined ? { loggingConfiguration: sm.loggingConfiguration } : {}),
    ...(sm.tracingConfiguration !== undefined ? { tracingConfiguration: sm.tracingConfiguration } : {}),
  };
  return { record: { ...sm, versions: [...(sm.versions ?? []), version], lastVersion: number }, version };
}

/** DeleteStateMachineVersion: refused while an alias routes to it; a version that is gone already is fine. */
export function deleteVersion(sm: StateMachineRecord, n: number): StateMachineRecord {
  const arn = versionArn(sm, n);
  const user = sm.aliases?.find((a) => a.routingConfiguration.some((r) => r.stateMachineVersionArn === arn));
  if (user) {
    throw new SfnApiError(
      'ConflictException',
      `Version ${arn} can't be deleted: the alias '${user.name}' routes executions to it; update or delete that alias first`,
    );
  }
  if (!findVersion(sm, n)) return sm;
  return { ...sm, versions: sm.versions!.filter((v) => v.version !== n) };
}

/**
 * A routing configuration checked the way Step Functions checks it: one or two distinct published
 * versions of one state machine, whole-number weights from 0 to 100 that add up to 100.
 */
export function checkRouting(
  raw: unknown,
  lookup: (stateMachineArn: string) => StateMachineRecord | undefined,
): { sm: StateMachineRecord; routes: AliasRoute[] } {
  if (!Array.isArray(raw) || raw.length < 1 || raw.length > 2) {
    throw new SfnApiError(
      'ValidationException',
      "1 validation error detected: Value at 'routingConfiguration' failed to satisfy constraint: Member must have length between 1 and 2 (route to one version, or split between two)",
    );
  }
  const routes: AliasRoute[] = [];
  let sm: StateMachineRecord | undefined;
  for (const [i, item] of raw.entries()) {
    const r = (item ?? {}) as Record<string, unknown>;
    const parts = parseStateMachineArn(r.stateMachineVersionArn, `routingConfiguration.${i + 1}.member.stateMachineVersionArn`);
    if (parts.version === undefined) {
      throw new SfnApiError(
        'ValidationException',
        `routingConfiguration.${i + 1}: '${String(r.stateMachineVersionArn)}' is not a version ARN; an alias routes to versions (arn:…:stateMachine:<name>:<version>)`,
      );
    }
    const weight = r.weight;
    if (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 0 || weight > 100) {
      throw new SfnApiError(
        'ValidationException',
        `routingConfiguration.${i + 1}: the weight must be a whole number from 0 to 100 (got ${JSON.stringify(weight)})`,
      );
    }
    const owner = lookup(parts.stateMachineArn);
    if (!owner || !findVersion(owner, parts.version)) {
      throw new SfnApiError(
        'ResourceNotFound',
        `Resource not found: '${String(r.stateMachineVersionArn)}' (publish the version first with PublishStateMachineVersion)`,
      );
    }
    if (sm && sm.stateMachineArn !== owner.stateMachineArn) {
      throw new SfnApiError('ValidationException', 'routingConfiguration: both versions must belong to the same state machine');
    }
    sm = owner;
    if (routes.some((x) => x.stateMachineVersionArn === r.stateMachineVersionArn)) {
      throw new SfnApiError(
        'ValidationException',
        'routingConfiguration: the same version is named twice; an alias splits executions between two different versions',
      );
    }
    routes.push({ stateMachineVersionArn: String(r.stateMachineVersionArn), weight });
  }
  const total = routes.reduce((n, r) => n + r.weight, 0);
  if (total !== 100)
    throw new SfnApiError('ValidationException', `routingConfiguration: the weights add up to ${total}; they must add up to 100`);
  return { sm: sm!, routes };
}

/** CreateStateMachineAlias: the same name with the same routing and description again returns the existing alias. */
export function createAlias(
  sm: StateMachineRecord,
  req: { name?: unknown; description?: unknown },
  routes: AliasRoute[],
  now: number,
): { record: StateMachineRecord; alias: StateMachineAlias } {
  const name = checkAliasName(req.name);
  const description = checkDescription(req.description, 'description');
  const existing = findAlias(sm, name);
  if (existing) {
    if (existing.description === description && JSON.stringify(existing.routingConfiguration) === JSON.stringify(routes))
      return { record: sm, alias: existing };
    throw new SfnApiError(
      'ConflictException',
      `Alias '${aliasArn(sm, name)}' already exists with another configuration; change it with UpdateStateMachineAlias`,
    );
  }
  if ((sm.aliases?.length ?? 0) >= MAX_ALIASES) {
    throw new SfnApiError(
      'ServiceQuotaExceededException',
      `The state machine '${sm.stateMachineArn}' has ${MAX_ALIASES} aliases, the most it may have: delete one before creating another`,
    );
  }
  const alias: StateMachineAlias = {
    name,
    routingConfiguration: routes,
    creationDate: now,
    ...(description !== undefined ? { description } : {}),
  };
  return { record: { ...sm, aliases: [...(sm.aliases ?? []), alias] }, alias };
}

/** UpdateStateMachineAlias: a new description, a new routing, or both. */
export function updateAlias(
  sm: StateMachineRecord,
  name: string,
  req: { description?: unknown },
  routes: AliasRoute[] | undefined,
  now: number,
): { record: StateMachineRecord; alias: StateMachineAlias } {
  const alias = requireAlias(sm, name);
  if (req.description === undefined && routes === undefined) {
    throw new SfnApiError('ValidationException', 'Either the description or the routingConfiguration must be specified.');
  }
  const description = checkDescription(req.description, 'description');
  const { description: _d, ...rest } = alias;
  const updated: StateMachineAlias = {
    ...(req.description === undefined ? alias : rest),
    ...(description !== undefined ? { description } : {}),
    ...(routes ? { routingConfiguration: routes } : {}),
    updateDate: now,
  };
  return { record: { ...sm, aliases: sm.aliases!.map((a) => (a.name === name ? updated : a)) }, alias: updated };
}

/** DeleteStateMachineAlias. */
export function deleteAlias(sm: StateMachineRecord, name: string): StateMachineRecord {
  requireAlias(sm, name);
  return { ...sm, aliases: sm.aliases!.filter((a) => a.name !== name) };
}

/** The alias, or ResourceNotFound naming its ARN. */
export function requireAlias(sm: StateMachineRecord, name: string): StateMachineAlias {
  const alias = findAlias(sm, name);
  if (!alias) throw new SfnApiError('ResourceNotFound', `Resource not found: '${aliasArn(sm, name)}'`);
  return alias;
}

/**
 * The version an alias sends one execution to: weighted at random, as Step Functions splits traffic
 * (`random` is injected so tests can pin the draw).
 */
export function routeAlias(alias: StateMachineAlias, random: () => number = Math.random): string {
  const draw = random() * 100;
  let upTo = 0;
  for (const r of alias.routingConfiguration) {
    upTo += r.weight;
    if (draw < upTo) return r.stateMachineVersionArn;
  }
  // A weight of 0 on the last route still leaves the first one the whole share.
  return alias.routingConfiguration.find((r) => r.weight > 0)!.stateMachineVersionArn;
}

/** Tags checked as TagResource and CreateStateMachine take them: `[{key, value}]`. */
export function checkTags(raw: unknown): ResourceTag[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw))
    throw new SfnApiError(
      'ValidationException',
      "1 validation error detected: Value at 'tags' failed to satisfy constraint: Member must be a list of {key, value}",
    );
  return raw.map((t: unknown, i) => {
    const { key, value } = (t ?? {}) as Record<string, unknown>;
    if (typeof key !== 'string' || key.length < 1 || key.length > 128 || key.startsWith('aws:')) {
      throw new SfnApiError(
        'ValidationException',
        `1 validation error detected: Value '${String(key)}' at 'tags.${i + 1}.member.key' failed to satisfy constraint: a tag key is 1-128 characters and must not start with 'aws:'`,
      );
    }
    if (value !== undefined && (typeof value !== 'string' || value.length > 256)) {
      throw new SfnApiError(
        'ValidationException',
        `1 validation error detected: Value at 'tags.${i + 1}.member.value' failed to satisfy constraint: a tag value is a string of at most 256 characters`,
      );
    }
    return { key, value: value ?? '' };
  });
}

/** TagResource: sets each tag (a key set again takes the new value); at most 50 tags a resource. */
export function tagRecord(sm: StateMachineRecord, tags: readonly ResourceTag[]): StateMachineRecord {
  const merged = new Map((sm.tags ?? []).map((t) => [t.key, t.value]));
  for (const t of tags) merged.set(t.key, t.value);
  if (merged.size > MAX_TAGS) {
    throw new SfnApiError(
      'TooManyTags',
      `Too many tags: '${sm.stateMachineArn}' would have ${merged.size}; a resource may have at most ${MAX_TAGS}`,
    );
  }
  return { ...sm, tags: [...merged].map(([key, value]) => ({ key, value })) };
}

/** UntagResource: removes the keys named (keys it does not have are ignored). */
export function untagRecord(sm: StateMachineRecord, keys: unknown): StateMachineRecord {
  if (!Array.isArray(keys) || keys.some((k) => typeof k !== 'string')) {
    throw new SfnApiError(
      'ValidationException',
      "1 validation error detected: Value at 'tagKeys' failed to satisfy constraint: Member must be a list of strings",
    );
  }
  const drop = new Set(keys as string[]);
  return { ...sm, tags: (sm.tags ?? []).filter((t) => !drop.has(t.key)) };
}
