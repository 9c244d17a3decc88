import { describe, expect, it } from 'vitest';
import { serialisedDefinition } from '../../src/lower/serialisedDefinition.js';
import { compileCase, goldenCases } from '../golden/goldenCases.js';

/** What serialisedDefinition stands for: one JSON.stringify of the whole definition, and a walk of its string values. */
function whole(definition: Record<string, unknown>) {
  const json = JSON.stringify(definition);
  const models = new Set<string>();
  const walk = (v: unknown): void => {
    if (typeof v === 'string') {
      if (v.startsWith('bedrock:') && v.length > 'bedrock:'.length) models.add(v.slice('bedrock:'.length));
    } else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) walk(x);
  };
  walk(JSON.parse(json));
  return {
    bytes: Buffer.byteLength(json, 'utf8'),
    placeholders: [...new Set(json.match(/\$\{[A-Za-z0-9]+\}/g) ?? [])].sort(),
    bedrockModels: [...models].sort(),
  };
}

describe('Function: serialisedDefinition', () => {
  it('gives the size and placeholders of the whole serialisation for every golden definition', () => {
    for (const file of goldenCases()) {
      const asl = compileCase(file).asl;
      expect(serialisedDefinition(asl), file).toEqual(whole(asl));
    }
  });

  it('counts non-Latin-1 text on either side of the cut, and placeholders anywhere', () => {
    const definition = {
      Comment: 'wf — compiled from ${Comment1}',
      StartAt: 'a',
      States: { a: { Type: 'Task', Resource: '${ModelStepFunctionArn}', Comment: 'ünïcode 😀 and ${Other}', End: true } },
      After: 'tail ${Tail9}',
    };
    expect(serialisedDefinition(definition)).toEqual(whole(definition));
  });

  it('finds the Bedrock models named as whole string values, escaped or not, and neither keys nor text that mentions one', () => {
    const definition = {
      Comment: 'compiled, mentioning bedrock:in.a.comment',
      StartAt: 'a',
      States: {
        a: {
          Type: 'Task',
          Arguments: {
            Payload: {
              config: {
                model: 'bedrock:anthropic.claude-3-5-haiku-20241022-v1:0',
                agentConfig: { model: 'bedrock:us.amazon.nova-"q"-v1:0' },
              },
            },
          },
          End: true,
        },
        b: {
          Type: 'Pass',
          Output: { 'bedrock:not-a-model': 'use bedrock:nor-this', models: ['bedrock:amazon.nova-micro-v1:0', 'bedrock:'] },
        },
      },
    };
    const found = serialisedDefinition(definition);
    expect(found).toEqual(whole(definition));
    expect(found.bedrockModels).toEqual(['amazon.nova-micro-v1:0', 'anthropic.claude-3-5-haiku-20241022-v1:0', 'us.amazon.nova-"q"-v1:0']);
  });

  it('adds up to the whole serialisation across nested Branches and Maps, skipped members, toJSON and many states', () => {
    const task = (i: number) => ({ Type: 'Task', Resource: '${FunctionStepFunctionArn}', Comment: `tâche ${i} 😀`, Next: `t${i + 1}` });
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`t${i}`, task(i)]));
    const definition = {
      Comment: 'nested — ${Top}',
      StartAt: 'par',
      Built: new Date(0),
      Skipped: undefined,
      States: {
        par: {
          Type: 'Parallel',
          Branches: [
            { StartAt: 't0', States: many },
            {
              StartAt: 'map',
              States: { map: { Type: 'Map', ItemProcessor: { StartAt: 'x', States: { x: { Type: 'Pass', End: true } } } } },
            },
            { StartAt: 'States', States: { States: { Type: 'Pass', Output: [1, undefined, () => 1, 'bedrock:m.one'], End: true } } },
          ],
          Assign: { when: new Date(0), 'key ${InKey}': 'bedrock:m.two', gone: undefined, fn: () => 0 },
          Note: { toJSON: (key: string) => `note on ${key} — ${'${InNote}'}` },
          Skip: { toJSON: () => undefined },
          End: true,
        },
        '${StateName}': { Type: 'Succeed', Comment: { toJSON: (key: string) => `member ${key}` } },
      },
    };
    expect(serialisedDefinition(definition)).toEqual(whole(definition));
    expect(serialisedDefinition(definition).placeholders).toEqual([
      '${FunctionStepFunctionArn}',
      '${InKey}',
      '${InNote}',
      '${StateName}',
      '${Top}',
    ]);
  });

  it('counts numbers, escapes, null-prototype objects, class instances and toJSON items as JSON.stringify writes them', () => {
    class Boxed {
      readonly inner = '${InClass}';
    }
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1, b: '${InBare}' });
    const definition = {
      StartAt: 'a',
      States: {
        a: {
          Type: 'Pass',
          Output: {
            numbers: [0, -0, 1.5, -2e-7, 1e21, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53],
            escapes: 'quote " backslash \\ tab \t newline \n nul \u0000 del \u007f ${Esc1} é 😀 \ud800 lone \udc00',
            bare,
            instance: new Boxed(),
            items: [new Date(0), { toJSON: (key: string) => `item ${key}` }, 'bedrock:m.three'],
            map: new Map([['k', 'v']]),
          },
          End: true,
        },
      },
    };
    expect(serialisedDefinition(definition)).toEqual(whole(definition));
  });

  it('refuses a definition that contains itself as JSON.stringify does', () => {
    const definition: Record<string, unknown> = { StartAt: 'a', States: { a: { Type: 'Pass', End: true } } };
    (definition.States as Record<string, Record<string, unknown>>).a!.Output = definition;
    expect(() => serialisedDefinition(definition)).toThrow(/circular/);
  });

  it('serialises a definition without States in one piece', () => {
    const definition = { Comment: 'no states', States: undefined };
    expect(serialisedDefinition(definition)).toEqual(whole(definition));
  });
});
