// A for_each at its default of 50 iterations whose large outputs a later step reads: each
// iteration's output is stored by reference beyond the iteration's inline limit (its envelope
// says so), so the Map's result and the state that reads it stay within the 256 KiB payload quota
// the embedded engine enforces as AWS does, and the reading steps get the full values.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileDocument } from '@stepforge/compiler';
import { ITERATION_INLINE_OUTPUT_MAX_BYTES } from '@stepforge/contract';
import { openStack, type EmbeddedStack } from '../../packages/embedded/src/EmbeddedStack.js';
import { EmbeddedRunService } from '../../packages/embedded/src/RunService.js';
import { main } from '@stepforge/cli';
import { bufferIo, tempProject } from './support/testIo.js';

const FUNCTIONS_DIR = fileURLToPath(new URL('./fixtures/large-outputs/', import.meta.url));

const FIFTY_LARGE = `document: {dsl: "1.0.0", name: Fifty large, version: "0.1.0"}
agents: {Writer: ""}
functions: {make_big: "", measure: ""}
input:
  items: {type: array, required: true}
steps:
  loop:
    call: for_each
    items: "\${ input.items }"
    do:
      make:
        call: function
        function: make_big
        input: {i: "\${ input.item }"}
      echo:
        call: agent
        agent: Writer
        input_template: "\${ steps.make.output }"
  draft:
    call: agent
    agent: Writer
    input_template: "Sources: \${ steps.loop.output }"
  measure:
    call: function
    function: measure
    input: {values: "\${ steps.loop.output }", text: "\${ steps.draft.output }"}
output:
  result: "\${ steps.measure.output }"
`;

describe('Embedded stack: a for_each of 50 large outputs read by a later step', () => {
  const project = tempProject('sf-large-loop-');
  let stack: EmbeddedStack;
  let service: EmbeddedRunService;

  beforeAll(async () => {
    stack = await openStack({
      projectDir: project.dir,
      inMemory: true,
      provider: 'local',
      env: { STEPFORGE_LOG_LEVEL: 'SILENT', STEPFORGE_FUNCTIONS_DIR: FUNCTIONS_DIR },
    });
    service = new EmbeddedRunService(stack, project.dir);
  });
  afterAll(async () => {
    await stack?.close();
    project.remove();
  });

  it('compiles: the steps of the iteration carry the smaller inline limit, the others do not', () => {
    const { asl } = compileDocument(FIFTY_LARGE, { file: 'fifty.yaml' });
    const argsOf = (id: string) => {
      const found: unknown[] = [];
      JSON.parse(JSON.stringify(asl), (_k, v: unknown) => {
        if (v && typeof v === 'object' && (v as { step?: { id?: string } }).step?.id === id) found.push(v);
        return v;
      });
      return found as { inlineOutputMaxBytes?: number }[];
    };
    expect(argsOf('make').map((a) => a.inlineOutputMaxBytes)).toEqual([ITERATION_INLINE_OUTPUT_MAX_BYTES]);
    expect(argsOf('echo').map((a) => a.inlineOutputMaxBytes)).toEqual([ITERATION_INLINE_OUTPUT_MAX_BYTES]);
    expect(argsOf('draft').map((a) => a.inlineOutputMaxBytes)).toEqual([undefined]);
  });

  it('runs to SUCCEEDED, and the later steps get all 50 full values through the references', async () => {
    const { entry } = await service.catalog.registerText(FIFTY_LARGE, 'fifty.yaml');
    const items = Array.from({ length: 50 }, (_, i) => i);
    const started = await service.start(entry, { items });
    const run = await service.wait(started.run.runId);
    expect({ status: run.status, error: run.error }).toEqual({ status: 'SUCCEEDED', error: undefined });
    const echoed = '[offline:echo] item 0 '.length + 8000;
    expect(run.output).toEqual({
      result: {
        count: 50,
        lengths: [echoed, echoed + 1],
        heads: ['[offline:echo] item 0 ', '[offline:echo] item 1 '],
        refs: false,
        textHead: '[offline:echo] Sources: ["[offline:echo]',
        // The text lists the 50 values as JSON (as the same array held inline is rendered).
        textItems: 50,
        textLength: expect.any(Number),
      },
    });
    expect((run.output as { result: { textLength: number } }).result.textLength).toBeGreaterThan(50 * 8000);
    // Each iteration's answer went by reference: the step records say where it is stored.
    const details = await service.details(run.runId);
    const echoes = details.records.filter((r) => r.stepId.startsWith('echo['));
    expect(echoes).toHaveLength(50);
    expect(echoes.every((r) => typeof r.outputRef === 'string' && r.outputRef.includes('BLOB#'))).toBe(true);
  });
});

describe("CLI: run prints a for_each's outputs that went by reference as their values", () => {
  const project = tempProject('sf-large-loop-cli-');
  afterAll(() => project.remove());

  it('run --json: the output lists the values, not references', async () => {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      `${project.dir}/three.yaml`,
      `document: {dsl: "1.0.0", name: Three large, version: "0.1.0"}
functions: {make_big: ""}
steps:
  loop:
    call: for_each
    items: [0, 1, 2]
    do:
      make: {call: function, function: make_big, input: {i: "\${ input.item }"}}
output:
  result: "\${ steps.loop.output }"
`,
    );
    const io = bufferIo(project.dir, { STEPFORGE_FUNCTIONS_DIR: FUNCTIONS_DIR });
    const code = await main(['run', 'three.yaml', '--json', '--in-memory'], io);
    expect({ code, err: io.stderr() }).toMatchObject({ code: 0 });
    const out = JSON.parse(io.stdout()) as { status: string; output: { result: string[] } };
    expect(out.status).toBe('SUCCEEDED');
    expect(out.output.result.map((v) => [v.slice(0, 7), v.length])).toEqual([
      ['item 0 ', 8007],
      ['item 1 ', 8007],
      ['item 2 ', 8007],
    ]);
  });

  it("runs show --json: the stored run's output lists the values too", async () => {
    const env = { STEPFORGE_FUNCTIONS_DIR: FUNCTIONS_DIR };
    const ran = bufferIo(project.dir, env);
    expect(await main(['run', 'three.yaml', '--json'], ran)).toBe(0);
    const { runId } = JSON.parse(ran.stdout()) as { runId: string };
    const shown = bufferIo(project.dir, env);
    expect(await main(['runs', 'show', runId, '--json'], shown)).toBe(0);
    const details = JSON.parse(shown.stdout()) as { run?: { output: { result: string[] } }; output?: { result: string[] } };
    const output = details.run?.output ?? details.output!;
    expect(output.result.map((v) => [v.slice(0, 7), v.length])).toEqual([
      ['item 0 ', 8007],
      ['item 1 ', 8007],
      ['item 2 ', 8007],
    ]);
  });
});
