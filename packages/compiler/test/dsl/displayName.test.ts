// `document.name` is a display name, any text; the workflow name (the state machine's, the compiled
// files', the run records') is an ASCII slug of it, the same on every compile.
import { describe, expect, it } from 'vitest';
import { compileDocument, duplicateWorkflowError, loadDslDocument, workflowSlug, WORKFLOW_NAME_MAX } from '@stepforge/compiler';

const STEPS = 'agents: {a: {}}\nsteps:\n  s: {call: agent, agent: a}\n';
const doc = (name: string) => `document:\n  dsl: "1.0"\n  name: ${name}\n  version: "1"\n${STEPS}`;
/** What a state machine name may be when it logs to CloudWatch: 1–80 ASCII letters, digits, '-', '_'. */
const STATE_MACHINE_NAME = /^[A-Za-z0-9_-]{1,80}$/;

describe('Function: workflowSlug', () => {
  it('turns display names into state machine names: spaces and punctuation runs become one -', () => {
    expect(workflowSlug('Document analysis')).toBe('Document-analysis');
    expect(workflowSlug('Seq infer')).toBe('Seq-infer');
    expect(workflowSlug('Triage — EU')).toBe('Triage-EU');
    expect(workflowSlug('Triage - EU')).toBe('Triage-EU');
    expect(workflowSlug('  Support: billing / refunds (v2)!  ')).toBe('Support-billing-refunds-v2');
    expect(workflowSlug('snake_case name')).toBe('snake_case-name');
  });

  it('keeps a name that already is a valid workflow name as it is, so no deployed state machine is renamed', () => {
    for (const name of ['order-triage', 'research_brief', 'A', '--odd--', 'x'.repeat(80)]) expect(workflowSlug(name)).toBe(name);
  });

  it('strips diacritics and transliterates letters that do not decompose', () => {
    expect(workflowSlug('Café déjà vu')).toBe('Cafe-deja-vu');
    expect(workflowSlug('Straße Øresund Łódź Æsir Þing')).toBe('Strasse-Oresund-Lodz-AEsir-THing');
    expect(workflowSlug('Ｆｕｌｌｗｉｄｔｈ　ｎａｍｅ')).toBe('Fullwidth-name');
  });

  it('cuts at 80 characters without leaving a trailing -', () => {
    const long = `${'a'.repeat(79)} tail`;
    expect(workflowSlug(long)).toBe('a'.repeat(79));
    expect(workflowSlug('word '.repeat(40))).toHaveLength(79);
    expect(workflowSlug('word '.repeat(40)).endsWith('-')).toBe(false);
    expect(WORKFLOW_NAME_MAX).toBe(80);
  });

  it('falls back to workflow-<hash> when nothing is left, different for different names and the same every time', () => {
    const a = workflowSlug('日本語のワークフロー');
    const b = workflowSlug('中文工作流');
    expect(a).toMatch(/^workflow-[0-9a-f]{8}$/);
    expect(b).toMatch(/^workflow-[0-9a-f]{8}$/);
    expect(a).not.toBe(b);
    expect(workflowSlug('日本語のワークフロー')).toBe(a);
    expect(workflowSlug('!!!')).toMatch(/^workflow-[0-9a-f]{8}$/);
  });

  it('always gives a valid state machine name (random Unicode text)', () => {
    let seed = 42;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    const pools = [
      [0x20, 0x7e],
      [0xa0, 0x24f],
      [0x2000, 0x206f],
      [0x3040, 0x30ff],
      [0x1f300, 0x1f5ff],
    ] as const;
    for (let i = 0; i < 2000; i++) {
      let s = '';
      const len = 1 + (next() % 120);
      for (let j = 0; j < len; j++) {
        const [lo, hi] = pools[next() % pools.length]!;
        s += String.fromCodePoint(lo + (next() % (hi - lo + 1)));
      }
      const slug = workflowSlug(s);
      expect(slug, JSON.stringify(s)).toMatch(STATE_MACHINE_NAME);
      expect(workflowSlug(s)).toBe(slug);
    }
  });
});

describe('Function: loadDslDocument (document.name)', () => {
  it('accepts any non-empty text as the display name and derives the workflow name from it', () => {
    for (const [name, slug] of [
      ['Document analysis', 'Document-analysis'],
      ['Seq infer', 'Seq-infer'],
      ['"Triage — EU"', 'Triage-EU'],
      ['order-triage', 'order-triage'],
    ] as const) {
      const r = loadDslDocument(doc(name), { file: 'w.yaml' });
      expect(r.errors).toEqual([]);
      expect(r.warnings).toEqual([]);
      const display = name.replace(/^"|"$/g, '');
      expect(r.document).toMatchObject({
        name: slug,
        displayName: display,
        metadata: { name: display },
        nameLocation: { file: 'w.yaml', line: 3, column: 9 },
      });
    }
  });

  it('refuses an empty or blank name, at the name, saying what to write', () => {
    for (const name of ['""', '"   "']) {
      const r = loadDslDocument(doc(name), { file: 'w.yaml' });
      expect(r.errors.map((e) => [e.code, e.message, e.location?.line, e.location?.column])).toEqual([
        ['schema', 'document.name: document.name must not be empty: give the workflow a display name, e.g. name: Document analysis', 3, 9],
      ]);
    }
  });

  it('refuses a name that is not text, at the name', () => {
    const r = loadDslDocument(doc('[a, b]'), { file: 'w.yaml' });
    expect(r.errors.map((e) => [e.code, e.message, e.location?.line, e.location?.column])).toEqual([
      ['schema', "document.name: expected the workflow's display name as text, e.g. name: Document analysis, got a list", 3, 9],
    ]);
  });
});

describe('Function: compileDocument (display names)', () => {
  it('names the state machine and the manifest by the slug, and shows the display name in the Comments', () => {
    const r = compileDocument(doc('"Triage — EU"'), { file: 'workflows/triage.yaml' });
    expect([r.name, r.displayName]).toEqual(['Triage-EU', 'Triage — EU']);
    expect([r.manifest.workflow, r.manifest.displayName]).toEqual(['Triage-EU', 'Triage — EU']);
    expect([r.ir.name, r.ir.displayName]).toEqual(['Triage-EU', 'Triage — EU']);
    expect(r.asl['Comment']).toBe('Triage — EU — compiled by Stepforge from workflows/triage.yaml');
    // The run's own record of its workflow is the workflow name, which runs are listed by.
    expect(JSON.stringify(r.asl)).toContain('"workflow":"Triage-EU"');
  });

  it('gives the same names and the same definition on every compile', () => {
    const a = compileDocument(doc('Document analysis'), { file: 'd.yaml' });
    const b = compileDocument(doc('Document analysis'), { file: 'd.yaml' });
    expect(b.name).toBe('Document-analysis');
    expect(b.asl).toEqual(a.asl);
    expect(b.manifest).toEqual(a.manifest);
  });

  it("keeps a chain document's name as both names", () => {
    const r = compileDocument('name: quick\nchain: "a@web-search"\ntasks:\n  a: {kind: model, prompt: hi}\n', { file: 'q.chain.yaml' });
    expect([r.name, r.displayName, r.manifest.displayName]).toEqual(['quick', 'quick', 'quick']);
  });
});

describe('Function: duplicateWorkflowError', () => {
  it("names both files and both display names, at the second one's name", () => {
    const e = duplicateWorkflowError(
      { name: 'Triage-EU', displayName: 'Triage — EU', file: 'workflows/a.yaml' },
      {
        name: 'Triage-EU',
        displayName: 'Triage EU',
        file: 'workflows/b.yaml',
        nameLocation: { file: 'workflows/b.yaml', line: 3, column: 9 },
      },
    );
    expect(e).toMatchObject({
      name: 'StepforgeError',
      code: 'duplicate_workflow',
      message:
        "workflows/b.yaml names its workflow 'Triage EU' (workflow name 'Triage-EU'), which gives the same workflow name as 'Triage — EU' (workflow name 'Triage-EU') of workflows/a.yaml: state machine names must be unique in a project",
      location: { file: 'workflows/b.yaml', line: 3, column: 9 },
      hint: 'give one of them another name (document.name), one that differs in letters or digits, not only in spaces, punctuation or accents',
      details: { workflow: 'Triage-EU', files: ['workflows/a.yaml', 'workflows/b.yaml'] },
    });
    const same = duplicateWorkflowError({ name: 'x', displayName: 'x', file: 'a.yaml' }, { name: 'x', displayName: 'x', file: 'b.yaml' });
    expect(same.message).toBe("b.yaml and a.yaml both name their workflow 'x': state machine names must be unique in a project");
    expect(same.location).toEqual({ file: 'b.yaml', line: 1, column: 1 });
  });
});
