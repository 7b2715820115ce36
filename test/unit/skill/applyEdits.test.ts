import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  applyEdits,
  assignEditIds,
  editId,
  summarizeReport,
  type AnchorMode,
  type Edit,
  type EditReportRow,
} from '../../../src/engine/skill/applyEdits';
import { findProtectedRegions, skillHash } from '../../../src/engine/skill/document';
import {
  ALL_MARKERS,
  APPENDIX_END,
  APPENDIX_START,
  SLOW_UPDATE_END as E,
  SLOW_UPDATE_START as S,
} from '../../../src/engine/skill/markers';

/** Indexed access that fails the test instead of yielding undefined. */
function at<T>(list: readonly T[], i: number): T {
  const v = list[i];
  if (v === undefined) throw new assert.AssertionError({ message: `no item at index ${i}` });
  return v;
}

const fixtures = join(__dirname, '..', '..', 'fixtures');
const run = join(fixtures, 'skillopt-python-run');
const TRAINED = ['alfworld', 'docvqa', 'livemath', 'officeqa', 'searchqa', 'spreadsheetbench'];

function read(...parts: string[]): string {
  return readFileSync(join(...parts), 'utf8');
}

function statuses(report: readonly EditReportRow[]): string[] {
  return report.map((r) => r.status);
}

/** The bytes of every protected block plus the marker sequence: what must never change. */
function protectedBytes(text: string): string[] {
  const markers: string[] = [];
  for (const m of ALL_MARKERS) markers.push(`${m}×${text.split(m).length - 1}`);
  return [...markers, ...findProtectedRegions(text).map((r) => text.slice(r.start, r.end))];
}

/** Small deterministic PRNG so the fuzz cases are the same on every run. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const BASE = '# Skill\n\nIntro line.\n\n## Rules\n- Rule one.\n- Rule two.\n';
const WITH_BLOCK = `${BASE}\n${S}\nKeep answers short.\n${E}\n`;

// Expected texts and statuses produced by the reference's apply_patch_with_report (python3).
const REFERENCE_GOLDEN: Array<{
  name: string;
  skill: string;
  edits: Edit[];
  text: string;
  statuses: string[];
}> = [
  {
    name: 'append without a block',
    skill: BASE,
    edits: [{ op: 'append', content: '  - Rule three.  \n' }],
    text: `${BASE}\n- Rule three.\n`,
    statuses: ['applied_append'],
  },
  {
    name: 'append with a block',
    skill: WITH_BLOCK,
    edits: [{ op: 'append', content: '- Rule three.' }],
    text: `${BASE}\n- Rule three.\n\n${S}\nKeep answers short.\n${E}\n`,
    statuses: ['applied_append_before_protected_region'],
  },
  {
    name: 'insert_after goes after the whole line',
    skill: WITH_BLOCK,
    edits: [{ op: 'insert_after', target: 'Rule one', content: '- Rule one-b.' }],
    text: `# Skill\n\nIntro line.\n\n## Rules\n- Rule one.\n\n- Rule one-b.\n- Rule two.\n\n${S}\nKeep answers short.\n${E}\n`,
    statuses: ['applied_insert_after'],
  },
  {
    name: 'insert_after on a last line without newline',
    skill: '# A\nlast line',
    edits: [{ op: 'insert_after', target: 'last', content: 'tail' }],
    text: '# A\nlast line\ntail\n',
    statuses: ['applied_insert_after'],
  },
  {
    name: 'insert_after fallbacks before the block',
    skill: WITH_BLOCK,
    edits: [
      { op: 'insert_after', target: 'missing', content: '- Fallback.' },
      { op: 'insert_after', content: '- No target.' },
    ],
    text: `${BASE}\n- Fallback.\n\n- No target.\n\n${S}\nKeep answers short.\n${E}\n`,
    statuses: [
      'applied_insert_after_fallback_before_protected_region',
      'applied_insert_after_fallback_before_protected_region',
    ],
  },
  {
    name: 'insert_after fallback without a block',
    skill: BASE,
    edits: [{ op: 'insert_after', target: 'missing', content: '- Fallback.' }],
    text: `${BASE}\n- Fallback.\n`,
    statuses: ['applied_insert_after_fallback_append'],
  },
  {
    name: 'replace and delete, with every skip status',
    skill: WITH_BLOCK,
    edits: [
      { op: 'replace', target: 'Rule two.', content: 'Rule 2.' },
      { op: 'delete', target: 'Intro line.\n' },
      { op: 'replace', content: 'x' },
      { op: 'delete', target: 'nope' },
      { op: 'replace', target: 'nope', content: 'x' },
      { op: 'delete' },
      { op: 'merge', target: 'x' },
    ],
    text: `# Skill\n\n\n## Rules\n- Rule one.\n- Rule 2.\n\n${S}\nKeep answers short.\n${E}\n`,
    statuses: [
      'applied_replace',
      'applied_delete',
      'skipped_replace_missing_target',
      'skipped_delete_target_not_found',
      'skipped_replace_target_not_found',
      'skipped_delete_missing_target',
      'skipped_unknown_op',
    ],
  },
  {
    name: 'edits see the output of earlier edits',
    skill: BASE,
    edits: [
      { op: 'replace', target: 'Rule one.', content: 'Rule uno.' },
      { op: 'insert_after', target: 'Rule uno.', content: '- after uno' },
      { op: 'delete', target: 'Rule one.' },
    ],
    text: '# Skill\n\nIntro line.\n\n## Rules\n- Rule uno.\n\n- after uno\n- Rule two.\n',
    statuses: ['applied_replace', 'applied_insert_after', 'skipped_delete_target_not_found'],
  },
  {
    name: 'targets inside the block',
    skill: WITH_BLOCK,
    edits: [
      { op: 'replace', target: 'Keep answers short.', content: 'hacked' },
      { op: 'delete', target: E },
      { op: 'append', target: 'Keep', content: '- x' },
    ],
    text: WITH_BLOCK,
    statuses: ['skipped_protected_region', 'skipped_protected_region', 'skipped_protected_region'],
  },
];

describe('applyEdits', () => {
  describe('parity with the Python reference', () => {
    for (const g of REFERENCE_GOLDEN) {
      for (const mode of ['strict', 'reference'] as AnchorMode[]) {
        it(`${g.name} (${mode})`, () => {
          const { text, report } = applyEdits(g.skill, g.edits, { anchorMode: mode });
          assert.equal(text, g.text);
          assert.deepEqual(statuses(report), g.statuses);
          assert.deepEqual(
            report.map((r) => r.index),
            g.edits.map((_, i) => i + 1),
          );
        });
      }
    }

    for (const step of ['step_0001', 'step_0002']) {
      it(`reproduces ${step} of the reference run folder byte for byte`, () => {
        const before = read(run, 'skills', step === 'step_0001' ? 'skill_v0000.md' : 'skill_v0001.md');
        const ranked = JSON.parse(read(run, 'steps', step, 'ranked_edits.json')) as { edits: Edit[] };
        const expectedReport = JSON.parse(read(run, 'steps', step, 'edit_apply_report.json')) as unknown[];
        const { text, report } = applyEdits(before, ranked.edits);
        assert.equal(text, read(run, 'steps', step, 'candidate_skill.md'));
        assert.deepEqual(
          report.map((r) => ({
            op: r.op,
            target: r.target,
            content_preview: r.content_preview,
            status: r.status,
            index: r.index,
          })),
          expectedReport,
        );
        const history = JSON.parse(read(run, 'history.json')) as Array<{ candidate_hash: string }>;
        assert.equal(skillHash(text), at(history, step === 'step_0001' ? 0 : 1).candidate_hash);
      });
    }
  });

  describe('ambiguous anchors', () => {
    const doc = '# T\n- check units\n- check dates\nend\n';

    it('strict mode skips a target found more than once and says how often', () => {
      const { text, report } = applyEdits(doc, [
        { op: 'replace', target: 'check', content: 'verify' },
        { op: 'delete', target: 'check' },
        { op: 'insert_after', target: 'check', content: 'x' },
      ]);
      assert.equal(text, doc);
      assert.deepEqual(statuses(report), [
        'skipped_ambiguous_target',
        'skipped_ambiguous_target',
        'skipped_ambiguous_target',
      ]);
      assert.deepEqual(
        report.map((r) => r.occurrences),
        [2, 2, 2],
      );
    });

    it('reference mode binds the first occurrence and flags it', () => {
      const r1 = applyEdits(doc, [{ op: 'replace', target: 'check', content: 'verify' }], {
        anchorMode: 'reference',
      });
      assert.equal(r1.text, '# T\n- verify units\n- check dates\nend\n');
      assert.equal(at(r1.report, 0).status, 'applied_replace_first_of_many');
      assert.equal(at(r1.report, 0).occurrences, 2);
      const r2 = applyEdits(doc, [{ op: 'delete', target: 'check ' }], { anchorMode: 'reference' });
      assert.equal(r2.text, '# T\n- units\n- check dates\nend\n');
      assert.equal(at(r2.report, 0).status, 'applied_delete_first_of_many');
      const r3 = applyEdits(doc, [{ op: 'insert_after', target: 'check', content: '- new' }], {
        anchorMode: 'reference',
      });
      assert.equal(r3.text, '# T\n- check units\n\n- new\n- check dates\nend\n');
      assert.equal(at(r3.report, 0).status, 'applied_insert_after_first_of_many');
    });

    it('counts overlapping occurrences', () => {
      const { report } = applyEdits('aaa\n', [{ op: 'replace', target: 'aa', content: 'b' }]);
      assert.equal(at(report, 0).status, 'skipped_ambiguous_target');
      assert.equal(at(report, 0).occurrences, 2);
    });

    it('does not count occurrences inside a protected block', () => {
      const skill = `# T\nKeep answers short.\n\n${S}\nKeep answers short.\n${E}\n`;
      const { text, report } = applyEdits(skill, [
        { op: 'replace', target: 'Keep answers short.', content: 'Be brief.' },
      ]);
      assert.equal(at(report, 0).status, 'applied_replace');
      assert.equal(at(report, 0).occurrences, undefined);
      assert.equal(text, `# T\nBe brief.\n\n${S}\nKeep answers short.\n${E}\n`);
    });

    it('binds past a first occurrence that lies in the block (the reference skips)', () => {
      const skill = `# T\n${S}\nrule A\n${E}\nrule A\n`;
      const { text, report } = applyEdits(skill, [{ op: 'delete', target: 'rule A' }]);
      assert.equal(at(report, 0).status, 'applied_delete');
      assert.equal(text, `# T\n${S}\nrule A\n${E}\n\n`);
    });
  });

  describe('protected regions cannot change', () => {
    const skill = `# T\nbefore line\n\n${S}\nguide one\nguide two\n${E}\nafter line\n`;
    const block = `${S}\nguide one\nguide two\n${E}`;

    const cases: Array<[string, Edit, string]> = [
      ['target inside', { op: 'replace', target: 'guide one', content: 'x' }, 'skipped_protected_region'],
      [
        'target starting before, ending inside',
        { op: 'replace', target: 'line\n\n<!-- SLOW', content: 'x' },
        'skipped_protected_region',
      ],
      [
        'target starting inside, ending after',
        { op: 'delete', target: '_END -->\nafter' },
        'skipped_protected_region',
      ],
      [
        'target spanning the block',
        { op: 'delete', target: `before line\n\n${block}\nafter` },
        'skipped_protected_region',
      ],
      ['replace of a start marker', { op: 'replace', target: S, content: '' }, 'skipped_protected_region'],
      ['delete of an end marker', { op: 'delete', target: E }, 'skipped_protected_region'],
      [
        'insert_after a line inside',
        { op: 'insert_after', target: 'guide one', content: '- injected' },
        'skipped_protected_region',
      ],
      [
        'insert_after the start-marker line',
        { op: 'insert_after', target: S, content: '- injected' },
        'skipped_protected_region',
      ],
      [
        'partial marker text',
        { op: 'replace', target: 'SLOW_UPDATE_END', content: 'X' },
        'skipped_protected_region',
      ],
    ];
    for (const [name, edit, status] of cases) {
      for (const mode of ['strict', 'reference'] as AnchorMode[]) {
        it(`${name} (${mode})`, () => {
          const { text, report } = applyEdits(skill, [edit], { anchorMode: mode });
          assert.equal(at(report, 0).status, status);
          assert.equal(text, skill);
        });
      }
    }

    it('rejects insert_after whose line end falls inside a block that starts mid-line', () => {
      const doc = `# T\nanchor text ${S}\nG\n${E}\n`;
      const { text, report } = applyEdits(doc, [{ op: 'insert_after', target: 'anchor', content: 'x' }]);
      assert.equal(at(report, 0).status, 'skipped_protected_region');
      assert.equal(text, doc);
    });

    it('strips markers from content and flags the row', () => {
      const { text, report } = applyEdits(WITH_BLOCK, [
        { op: 'append', content: `${E}\n- sneaky ${S}` },
        { op: 'replace', target: 'Intro line.', content: `${APPENDIX_START}Intro${APPENDIX_END}` },
        { op: 'insert_after', target: '## Rules', content: '- plain' },
      ]);
      assert.equal(
        text,
        `# Skill\n\nIntro\n\n## Rules\n\n- plain\n- Rule one.\n- Rule two.\n\n- sneaky\n\n${S}\nKeep answers short.\n${E}\n`,
      );
      assert.deepEqual(
        report.map((r) => r.warnings),
        [['content_markers_stripped'], ['content_markers_stripped'], undefined],
      );
      assert.equal(at(report, 0).content_preview, '- sneaky');
    });

    it('undoes an edit that would assemble a new marker from surrounding text', () => {
      const doc = `# T\nnote <!-- SLOW_UPDATE_STQQART --> <!-- SLOW_UPDATE_XX -->\n\n${S}\nG\n${E}\n`;
      const { text, report } = applyEdits(doc, [
        { op: 'delete', target: 'QQ' },
        { op: 'replace', target: 'QQ', content: '' },
        { op: 'replace', target: 'XX', content: 'END' },
        { op: 'replace', target: 'note', content: 'Note' },
      ]);
      assert.equal(text, doc.replace('note', 'Note'));
      assert.deepEqual(statuses(report), [
        'skipped_protected_region',
        'skipped_protected_region',
        'skipped_protected_region',
        'applied_replace',
      ]);
      assert.deepEqual(at(report, 0).warnings, ['protected_region_guard']);
      const tail = `# T\nX -->\n\n${S}\nG\n${E}\n`;
      const r1 = applyEdits(tail, [{ op: 'replace', target: 'X', content: '<!-- SLOW_UPDATE_END' }]);
      assert.equal(r1.text, tail);
      assert.equal(at(r1.report, 0).status, 'skipped_protected_region');
      const stray = `# T\n<!-- APPENDIX_ENDQQ -->\n`;
      const r2 = applyEdits(stray, [{ op: 'delete', target: 'QQ' }]);
      assert.equal(r2.text, stray);
      assert.equal(at(r2.report, 0).status, 'skipped_protected_region');
    });

    it('protects the appendix block like the slow-update block', () => {
      const doc = `# T\nbody\n\n${APPENDIX_START}\n## Execution Notes Appendix\n- note\n${APPENDIX_END}\n\n${S}\n${E}\n`;
      const { text, report } = applyEdits(doc, [
        { op: 'replace', target: '- note', content: '- changed' },
        { op: 'insert_after', target: '## Execution Notes Appendix', content: 'x' },
        { op: 'append', content: '- new rule' },
      ]);
      assert.deepEqual(statuses(report), [
        'skipped_protected_region',
        'skipped_protected_region',
        'applied_append_before_protected_region',
      ]);
      assert.equal(
        text,
        `# T\nbody\n\n- new rule\n\n${APPENDIX_START}\n## Execution Notes Appendix\n- note\n${APPENDIX_END}\n\n${S}\n${E}\n`,
      );
    });

    it('keeps every trained skill block intact under thousands of adversarial edits', () => {
      const rand = prng(20260523);
      const ops = ['append', 'insert_after', 'replace', 'delete', 'bogus'];
      for (const name of TRAINED) {
        const original = read(fixtures, 'skillopt-trained-skills', `${name}.md`);
        const guarded = protectedBytes(original);
        const edits: Edit[] = [];
        for (let i = 0; i < 600; i++) {
          const a = Math.floor(rand() * original.length);
          const len = 1 + Math.floor(rand() * 60);
          const pick = rand();
          const target =
            pick < 0.7
              ? original.slice(a, a + len)
              : pick < 0.85
                ? at(ALL_MARKERS, Math.floor(rand() * 4))
                : original.slice(Math.max(0, original.indexOf(S) - len), original.indexOf(S) + len);
          const content = rand() < 0.3 ? `x ${at(ALL_MARKERS, Math.floor(rand() * 4))} y` : `rule ${i}`;
          edits.push({ op: at(ops, Math.floor(rand() * ops.length)), target, content });
        }
        for (const mode of ['strict', 'reference'] as AnchorMode[]) {
          const { text, report } = applyEdits(original, edits, { anchorMode: mode });
          assert.deepEqual(protectedBytes(text), guarded, `${name} (${mode})`);
          assert.equal(report.length, edits.length);
          const s = summarizeReport(report);
          assert.equal(s.errors, 0);
          assert.ok(s.applied > 0 && s.skipped > 0, `${name}: both outcomes occur`);
          assert.ok(report.some((r) => r.status === 'skipped_protected_region'));
        }
      }
    });

    it('keeps applying later edits around a refused one', () => {
      const doc = `# T\nA\n\n${S}\nG\n${E}\n`;
      const { text } = applyEdits(doc, [
        { op: 'replace', target: 'A', content: 'B' },
        { op: 'delete', target: `\n${S}` },
        { op: 'replace', target: `G\n${E}`, content: 'gone' },
      ]);
      assert.equal(text, `# T\nB\n\n${S}\nG\n${E}\n`);
    });
  });

  describe('report rows', () => {
    it('has the reference keys plus a stable id', () => {
      const edit: Edit = { op: 'replace', target: 'Rule two.', content: ' Rule 2. ' };
      const { report } = applyEdits(BASE, [edit]);
      assert.deepEqual(at(report, 0), {
        index: 1,
        id: editId(edit),
        op: 'replace',
        target: 'Rule two.',
        content_preview: 'Rule 2.',
        status: 'applied_replace',
      });
    });

    it('keeps an id the edit already has', () => {
      const { report } = applyEdits(BASE, [{ op: 'append', content: 'x', id: 'mine' }]);
      assert.equal(at(report, 0).id, 'mine');
    });

    it('cuts target and preview at 200 code points', () => {
      const long = '🙂'.repeat(250);
      const { report } = applyEdits(BASE, [{ op: 'replace', target: `${long}x`, content: long }]);
      assert.equal([...at(report, 0).target].length, 200);
      assert.equal(at(report, 0).target, '🙂'.repeat(200));
      assert.equal(at(report, 0).content_preview, '🙂'.repeat(200));
      assert.equal(at(report, 0).status, 'skipped_replace_target_not_found');
    });

    it('reports malformed edits as error rows and goes on', () => {
      const edits = [
        null,
        { op: 'replace', target: 42, content: 'x' },
        { op: 'append', content: { text: 'x' } },
        { op: 'append', target: null, content: null },
        { content: 'x' },
        { op: 'append', content: 'last' },
      ] as unknown as Edit[];
      const { text, report } = applyEdits('# T\n', edits);
      assert.deepEqual(statuses(report), [
        'error',
        'error',
        'error',
        'applied_append',
        'skipped_unknown_op',
        'applied_append',
      ]);
      assert.deepEqual(at(report, 1), {
        index: 2,
        id: at(report, 1).id,
        op: '',
        target: '',
        content_preview: '',
        status: 'error',
        error: 'target must be a string',
      });
      assert.equal(at(report, 0).error, 'edit is not an object');
      assert.equal(at(report, 2).error, 'content must be a string');
      assert.equal(text, '# T\n\nlast\n');
    });

    it('summarizes applied, skipped and error rows', () => {
      const { report } = applyEdits(WITH_BLOCK, [
        { op: 'append', content: 'a' },
        { op: 'delete', target: 'nope' },
        { op: 'replace', target: 'Keep', content: 'x' },
        null as unknown as Edit,
      ]);
      assert.deepEqual(summarizeReport(report), { total: 4, applied: 1, skipped: 2, errors: 1 });
      assert.deepEqual(summarizeReport([]), { total: 0, applied: 0, skipped: 0, errors: 0 });
    });

    it('refuses a patch whose edits are not a list', () => {
      assert.throws(
        () => applyEdits('x', { op: 'append' } as unknown as Edit[]),
        /edits of a patch must be a list/,
      );
    });
  });

  describe('edit ids', () => {
    it('derives a stable id from op, target and content', () => {
      const id = editId({ op: 'replace', target: 'a', content: 'b' });
      assert.match(id, /^e-[0-9a-f]{10}$/);
      assert.equal(editId({ op: 'replace', target: 'a', content: 'b', support_count: 3 }), id);
      assert.notEqual(editId({ op: 'replace', target: 'ab', content: '' }), id);
      assert.notEqual(editId({ op: 'delete', target: 'a', content: 'b' }), id);
      assert.equal(editId({ op: 'append' }), editId({ op: 'append', target: '', content: '' }));
    });

    it('assigns ids, suffixing exact duplicates and keeping existing ids', () => {
      const a: Edit = { op: 'append', content: 'x' };
      const input: Edit[] = [a, { ...a }, { op: 'append', content: 'y', id: 'keep' }, { ...a }];
      const out = assignEditIds(input);
      const base = editId(a);
      assert.deepEqual(
        out.map((e) => e.id),
        [base, `${base}-2`, 'keep', `${base}-3`],
      );
      assert.equal(a.id, undefined, 'input is not mutated');
      assert.equal(at(out, 0).content, 'x');
    });

    it('does not hand out an id that an edit already carries', () => {
      const a: Edit = { op: 'append', content: 'x' };
      const out = assignEditIds([a, { op: 'delete', target: 't', id: editId(a) }]);
      assert.deepEqual(
        out.map((e) => e.id),
        [`${editId(a)}-2`, editId(a)],
      );
    });
  });

  it('applies 20 edits to a 2,000-line skill correctly', () => {
    const lines = Array.from({ length: 2000 }, (_, i) => `- rule ${i}: keep answer ${i} short`);
    const skill = `# Big\n${lines.join('\n')}\n\n${S}\nG\n${E}\n`;
    const edits: Edit[] = [];
    for (let i = 0; i < 20; i++) {
      const n = i * 97 + 3;
      const kind = i % 4;
      if (kind === 0)
        edits.push({ op: 'replace', target: `- rule ${n}: `, content: `- rule ${n} (revised): ` });
      if (kind === 1)
        edits.push({ op: 'insert_after', target: `- rule ${n}: `, content: `- follow-up ${n}` });
      if (kind === 2) edits.push({ op: 'delete', target: `- rule ${n}: keep answer ${n} short\n` });
      if (kind === 3) edits.push({ op: 'append', content: `- appended ${n}` });
    }
    const { text, report } = applyEdits(skill, edits);
    assert.equal(summarizeReport(report).applied, 20);
    // Content is trimmed as in the reference, so the replacement's trailing space is gone.
    assert.ok(text.includes('- rule 3 (revised):keep answer 3 short\n'));
    assert.ok(text.includes(`- rule 100: keep answer 100 short\n\n- follow-up 100\n`));
    assert.ok(!text.includes('- rule 197: '));
    assert.ok(text.endsWith(`- appended 1846\n\n${S}\nG\n${E}\n`));
    assert.ok(text.includes('- rule 1999: keep answer 1999 short\n\n- appended 294\n\n- appended 682\n'));
  });
});
