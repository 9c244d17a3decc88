import jsonata from 'jsonata';
import { describe, expect, it } from 'vitest';
import {
  MAJORITY_JSONATA,
  REDUCE_JSONATA,
  SHAPES,
  chainDocumentToYaml,
  consensus,
  fanOutGather,
  isStepforgeError,
  loadChainDocument,
  mapReduce,
  reviewLoop,
  supervisor,
  swarm,
} from '../../src/index.js';

/** Loads a shape's YAML with every check, as `stepforge validate` would. */
function validate(yaml: string) {
  const r = loadChainDocument(yaml, { file: 'shape.chain.yaml' });
  return { ...r, messages: r.errors.map(String) };
}

describe('Function: swarm / supervisor / consensus / reviewLoop / mapReduce / fanOutGather', () => {
  it('emits documents that load and validate with no errors or warnings, for every shape and size', () => {
    for (const shape of SHAPES) {
      // A map-reduce's pure reduce carries every mapper's output through one state: at most 3 compile.
      for (const n of shape.name === 'map-reduce' ? [1, 2, 3] : [1, 2, 5]) {
        const doc = shape.build({ [shape.countOption]: n });
        const r = validate(chainDocumentToYaml(doc, 'comment'));
        expect(r.messages, `${shape.name} ${n}`).toEqual([]);
        expect(r.warnings, `${shape.name} ${n}`).toEqual([]);
      }
    }
    expect(validate(chainDocumentToYaml(consensus({ mode: 'majority', voters: 3 }))).messages).toEqual([]);
    for (const f of [() => consensus({ mode: 'majority', voters: 4 }), () => mapReduce({ mappers: 5 })]) {
      expect(f).toThrow(
        expect.objectContaining({
          code: 'invalid_shape_option',
          message: expect.stringMatching(/: at most 3, got \d: the pure '(tally|reduce)' step reads every output/),
        }),
      );
    }
  });

  it('builds the documented topologies', () => {
    expect(swarm({ agents: 2 }).chain).toBe('[agent_1@web-search & agent_2@web-search] > gather');
    expect(supervisor({ workers: 2, tools: ['fs-list', 'grep'] }).chain).toBe(
      'planner > [worker_1@fs-list@grep & worker_2@fs-list@grep] > integrate',
    );
    expect(consensus().chain).toBe('[voter_1@web-search & voter_2@web-search & voter_3@web-search] > judge');
    expect(consensus({ mode: 'majority' }).chain).toBe('[voter_1@web-search & voter_2@web-search & voter_3@web-search] > tally');
    expect(mapReduce({ mappers: 2 }).chain).toBe('split > [map_1@web-search & map_2@web-search] > reduce');
    expect(fanOutGather({ branches: ['pros', 'cons'] }).chain).toBe('source > [pros@web-search & cons@web-search] > gather');
    expect(fanOutGather({ branches: 1 }).chain).toBe('source > branch_1@web-search > gather');
  });

  it('unrolls the review loop into distinct, stably named steps', () => {
    const doc = reviewLoop({ rounds: 3 });
    expect(doc.chain).toBe('worker@web-search > review_1 > revise_1 > review_2 > revise_2 > review_3 > revise_3');
    const r = validate(chainDocumentToYaml(doc));
    expect(r.document!.edges).toEqual([
      [0, 1],
      [1, 2],
      [2, 3],
      [3, 4],
      [4, 5],
      [5, 6],
    ]);
    // Each reviser sees the previous version and its own review.
    expect((doc.tasks.revise_2 as { prompt: string }).prompt).toContain('${steps.revise_1.output}');
    expect((doc.tasks.revise_2 as { prompt: string }).prompt).toContain('${steps.review_2.output}');
  });

  it('has the judge select one candidate verbatim', () => {
    const judge = consensus({ voters: 2 }).tasks.judge as { kind: string; prompt: string; select?: string };
    expect(judge.kind).toBe('model');
    expect(judge.select).toBe('verbatim');
    expect(judge.prompt).toContain('return it verbatim');
    expect(judge.prompt).toContain('Candidate 2: ${steps.voter_2.output}');
  });

  it('rejects unknown or out-of-range options with invalid_shape_option', () => {
    const codeOf = (f: () => unknown) => {
      try {
        f();
        return 'no error';
      } catch (e) {
        return isStepforgeError(e) ? `${e.code}: ${e.message}` : String(e);
      }
    };
    expect(codeOf(() => swarm({ agents: 0 }))).toBe("invalid_shape_option: swarm: option 'agents': Too small: expected number to be >=1");
    expect(codeOf(() => swarm({ agnets: 3 } as never))).toBe('invalid_shape_option: swarm: option \'agnets\': Unrecognized key: "agnets"');
    expect(codeOf(() => consensus({ mode: 'vote' as never }))).toMatch(/^invalid_shape_option: consensus: option 'mode'/);
  });
});

describe("Constant: REDUCE_JSONATA (the map-reduce shape's reduce)", () => {
  it('is the reduce task of map-reduce: a pure step, no model call', () => {
    expect(mapReduce({ mappers: 3 }).tasks.reduce).toEqual({ kind: 'pure', expr: REDUCE_JSONATA });
  });

  it("lists the mappers' results in mapper order, a list even for one mapper", async () => {
    const reduce = (outputs: Record<string, unknown>) => jsonata(REDUCE_JSONATA).evaluate(outputs);
    expect(await reduce({ map_1: 'a', map_2: { b: 2 }, map_3: ['c'] })).toEqual(['a', { b: 2 }, ['c']]);
    expect(await reduce({ map_1: 'only' })).toEqual(['only']);
  });

  it('evaluates the same way inside the lowering wrapper `{parents}.( expr )`', async () => {
    expect(await jsonata(`( {"map_1": "x", "map_2": "y"}.( ${REDUCE_JSONATA} ) )`).evaluate({})).toEqual(['x', 'y']);
  });
});

describe('Constant: MAJORITY_JSONATA', () => {
  const majority = (outputs: Record<string, unknown>) => jsonata(MAJORITY_JSONATA).evaluate(outputs);

  it('picks the most frequent answer', async () => {
    expect(await majority({ voter_1: 'blue', voter_2: 'red', voter_3: 'red' })).toBe('red');
    expect(await majority({ voter_1: { a: 1 }, voter_2: { a: 2 }, voter_3: { a: 2 }, voter_4: 'x' })).toEqual({ a: 2 });
  });

  it('breaks ties by first appearance', async () => {
    expect(await majority({ voter_1: 'blue', voter_2: 'red' })).toBe('blue');
    expect(await majority({ voter_1: 'red', voter_2: 'blue', voter_3: 'blue', voter_4: 'red' })).toBe('red');
  });

  it('works for a single voter', async () => {
    expect(await majority({ voter_1: 'only' })).toBe('only');
  });

  it('evaluates the same way inside the lowering wrapper `{parents}.( expr )`', async () => {
    const wrapped = `( {"voter_1": "a", "voter_2": "b", "voter_3": "b"}.( ${MAJORITY_JSONATA} ) )`;
    expect(await jsonata(wrapped).evaluate({})).toBe('b');
  });
});
