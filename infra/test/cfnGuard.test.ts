// CI runs cfn-guard 3.1.1 with the AWS Control Tower proactive rules (both from the pinned
// @cdklabs/cdk-validator-cfnguard) over the synthesized template: nothing may fail unacknowledged.
import { beforeAll, describe, expect, it } from 'vitest';
import { acknowledgementOf, GUARD_ACKNOWLEDGEMENTS, runCfnGuard, type GuardFinding } from '../lib/guard/cfnGuard.js';
import { synthFixtureStack } from './synthFixtureStack.js';

let findings: GuardFinding[];
let resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
beforeAll(() => {
  process.env['CDK_VALIDATION'] = 'false';
  const { template } = synthFixtureStack({ apiAuth: 'cognito' });
  const json = template.toJSON() as { Resources: typeof resources };
  resources = json.Resources;
  findings = runCfnGuard(json);
}, 600_000);

describe('Function: runCfnGuard (Control Tower rules)', () => {
  it('finds nothing that is not acknowledged', () => {
    expect(findings.filter((f) => !acknowledgementOf(f))).toEqual([]);
  });

  it('uses every acknowledgement, each with its reason (a fixed finding leaves no stale one behind)', () => {
    const used = new Set(findings.map((f) => acknowledgementOf(f)).filter((a) => a !== undefined));
    expect(GUARD_ACKNOWLEDGEMENTS.filter((a) => !used.has(a)).map((a) => a.rule)).toEqual([]);
    for (const a of GUARD_ACKNOWLEDGEMENTS) expect(a.reason.length, a.rule).toBeGreaterThan(80);
    expect([...new Set(findings.map((f) => f.rule))].sort()).toEqual([
      'lambda_function_public_access_prohibited_check',
      'lambda_inside_vpc_check',
      'sqs_dlq_check',
    ]);
  });

  it('reports a resource that breaks a rule (the check is real)', () => {
    const broken = {
      Resources: {
        ...resources,
        Open: { Type: 'AWS::Lambda::Permission', Properties: { Action: 'lambda:InvokeFunction', FunctionName: 'f', Principal: '*' } },
      },
    };
    // The Lambda rules alone: the full set already ran over this template above.
    const extra = runCfnGuard(broken, 'lambda').filter((f) => f.resource === 'Open');
    expect(extra).toEqual([{ rule: 'lambda_function_public_access_prohibited_check', resource: 'Open', type: 'AWS::Lambda::Permission' }]);
    expect(acknowledgementOf(extra[0]!)).toBeUndefined();
  });

  it("gives API Gateway's invoke permissions the account, and keeps the stack key from being granted on", () => {
    const perms = Object.values(resources).filter(
      (r) => r.Type === 'AWS::Lambda::Permission' && r.Properties?.['Principal'] === 'apigateway.amazonaws.com',
    );
    expect(perms.length).toBeGreaterThan(0);
    for (const p of perms) expect(p.Properties!['SourceAccount']).toEqual({ Ref: 'AWS::AccountId' });
  });
});
