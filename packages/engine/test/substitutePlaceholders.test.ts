import { describe, expect, it } from 'vitest';
import { substitutePlaceholders } from '../src/substitutePlaceholders.js';

describe('substitutePlaceholders', () => {
  const subs = { ToolFn: 'arn:aws:lambda:us-east-1:123456789012:function:tool', 'Runs.Table-1': 'runs' };

  it('replaces known names, with the characters CDK allows, anywhere in the text', () => {
    expect(substitutePlaceholders('{"Resource":"${ToolFn}","T":"${Runs.Table-1}/x"}', subs)).toBe(
      '{"Resource":"arn:aws:lambda:us-east-1:123456789012:function:tool","T":"runs/x"}',
    );
  });

  it("leaves unknown names, the map's inherited keys and other text as written", () => {
    expect(substitutePlaceholders('${Nope} ${constructor} ${__proto__} $ {ToolFn} ${Tool Fn}', subs)).toBe(
      '${Nope} ${constructor} ${__proto__} $ {ToolFn} ${Tool Fn}',
    );
    expect(substitutePlaceholders('${ToolFn}', undefined)).toBe('${ToolFn}');
  });
});
