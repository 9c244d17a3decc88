// cfn-guard with the AWS Control Tower proactive-control rules, run over a synthesized template. The
// binary (cfn-guard 3.1.1) and the rules ship in @cdklabs/cdk-validator-cfnguard, pinned in infra's
// package.json: nothing is downloaded. Findings that are acknowledged rather than fixed are listed
// in GUARD_ACKNOWLEDGEMENTS, each with its reason; any other finding is a failure.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** One rule a resource does not comply with. */
export interface GuardFinding {
  /** The Control Tower rule, e.g. `lambda_inside_vpc_check`. */
  readonly rule: string;
  /** The logical id of the resource. */
  readonly resource: string;
  readonly type: string;
}

/** One reviewed acknowledgement: a rule on resources of a type, and why it is acceptable. */
export interface GuardAcknowledgement {
  readonly rule: string;
  readonly type: string;
  /** Matches the resource's logical id. */
  readonly resource: RegExp;
  readonly reason: string;
}

/** Every Control Tower finding the stack acknowledges, and why. */
export const GUARD_ACKNOWLEDGEMENTS: readonly GuardAcknowledgement[] = [
  {
    rule: 'lambda_inside_vpc_check',
    type: 'AWS::Lambda::Function',
    resource: /^Handlers/,
    reason:
      'The handlers reach Bedrock, OpenAI-compatible endpoints, Slack, webhooks and MCP servers on the internet and DynamoDB, SQS and Step Functions through their public endpoints with IAM; a VPC would add NAT gateways and interface endpoints (cost and cold starts) without narrowing what a handler may reach, which IAM and the outbound host allow-list already confine.',
  },
  {
    rule: 'lambda_function_public_access_prohibited_check',
    type: 'AWS::Lambda::Permission',
    resource: /^HttpApi.*ApiPermission/,
    reason:
      "A false positive: API Gateway may invoke the API Lambda only from this API (SourceArn, the method's execute-api ARN) and this account (SourceAccount). The rule accepts only literal strings, and in an environment-agnostic synth both are intrinsics (Fn::Join, Ref AWS::AccountId); with the account known at synth time the finding does not arise.",
  },
  {
    rule: 'sqs_dlq_check',
    type: 'AWS::SQS::Queue',
    resource: /Dlq/,
    reason:
      "A false positive: these are the dead-letter queues themselves, the end of the redrive chain. The rule's alternative for a dead-letter queue, a RedriveAllowPolicy naming its source queue, would need the source queue's ARN while the source queue's RedrivePolicy needs the dead-letter queue's: a dependency cycle.",
  },
];

/** Where the pinned package keeps the binary for this machine, and the Control Tower rules. */
export function cfnGuardPaths(): { bin: string; rules: string } {
  const root = dirname(createRequire(import.meta.url).resolve('@cdklabs/cdk-validator-cfnguard/package.json'));
  const os = process.platform === 'darwin' ? 'macos' : 'ubuntu';
  const arch = process.arch === 'arm64' ? 'aarch64' : 'x86_64';
  return { bin: join(root, 'bin', os, arch, 'cfn-guard'), rules: join(root, 'rules', 'control-tower', 'cfn-guard') };
}

/**
 * Run cfn-guard's Control Tower rules over `template` (all of them, or one service's folder such as
 * `lambda`); every (rule, resource) that does not comply.
 */
export function runCfnGuard(template: { Resources?: Record<string, { Type: string }> }, service?: string): GuardFinding[] {
  const paths = cfnGuardPaths();
  const rules = service === undefined ? paths.rules : join(paths.rules, service);
  const { bin } = paths;
  const dir = mkdtempSync(join(tmpdir(), 'stepforge-guard-'));
  try {
    const data = join(dir, 'template.json');
    writeFileSync(data, JSON.stringify(template));
    const r = spawnSync(bin, ['validate', '--rules', rules, '--data', data, '--output-format', 'json', '--show-summary', 'none'], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
    // 0: all pass, 19: some rule failed; anything else is cfn-guard itself failing.
    if (r.error || (r.status !== 0 && r.status !== 19))
      throw new Error(`cfn-guard failed (${r.error?.message ?? `exit ${r.status}`}): ${r.stderr}`);
    const findings = new Map<string, GuardFinding>();
    for (const report of parseConcatenatedJson(r.stdout)) {
      for (const nc of (report as { not_compliant?: { Rule?: { name?: string } }[] }).not_compliant ?? []) {
        const rule = nc.Rule?.name ?? 'unknown';
        for (const m of JSON.stringify(nc).matchAll(/"\/Resources\/([A-Za-z0-9]+)/g)) {
          const resource = m[1]!;
          findings.set(`${rule} ${resource}`, { rule, resource, type: template.Resources?.[resource]?.Type ?? 'unknown' });
        }
      }
    }
    return [...findings.values()].sort((a, b) => a.rule.localeCompare(b.rule) || a.resource.localeCompare(b.resource));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The acknowledgement that covers `f`, if one does. */
export function acknowledgementOf(f: GuardFinding): GuardAcknowledgement | undefined {
  return GUARD_ACKNOWLEDGEMENTS.find((a) => a.rule === f.rule && a.type === f.type && a.resource.test(f.resource));
}

/** cfn-guard prints one JSON document per rule file, one after another. */
function parseConcatenatedJson(text: string): unknown[] {
  const out: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') {
      if (depth++ === 0) start = i;
    } else if (c === '}' && --depth === 0) out.push(JSON.parse(text.slice(start, i + 1)));
  }
  return out;
}
