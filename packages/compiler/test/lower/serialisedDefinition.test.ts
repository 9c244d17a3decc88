import { describe, expect, it } from 'vitest';
import { serialisedDefinition } from '../../src/lower/serialisedDefinition.js';
import { compileCase, goldenCases } from '../golden/goldenCases.js';

/** What serialisedDefinition stands for: one JSON.stringify of the whole definition. */
function whole(definition: Record<string, unknown>) {
  const json = JSON.stringify(definition);
  return { bytes: Buffer.byteLength(json, 'utf8'), placeholders: [...new Set(json.match(/\$\{[A-Za-z0-9]+\}/g) ?? [])].sort() };
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

  it('serialises a definition without States in one piece', () => {
    const definition = { Comment: 'no states', States: undefined };
    expect(serialisedDefinition(definition)).toEqual(whole(definition));
  });
});
