import assert from 'node:assert/strict';
import type { Contract } from '../../../src/engine/llm/contracts/contract';
import {
  appendixConsolidateContract,
  metaSkillContract,
  slowUpdateContract,
} from '../../../src/engine/llm/contracts/epochEnd';
import { analystContract } from '../../../src/engine/llm/contracts/reflect';
import {
  lrAutonomousContract,
  mergeContract,
  parseLearningRate,
  rankingContract,
  rewriteContract,
} from '../../../src/engine/llm/contracts/update';
import { payloadKey } from '../../../src/engine/prompts/modes';
import { parseReply } from '../../../src/engine/llm/structured';

function valid<T>(contract: Contract<T>, value: unknown): T {
  const r = contract.schema.safeParse(value);
  if (!r.success) assert.fail(`expected valid, got ${JSON.stringify(r.error.issues)}`);
  return r.data;
}

/** The first validation problem as "path: message". */
function problem<T>(contract: Contract<T>, value: unknown): string {
  const r = parseReply(contract, JSON.stringify(value));
  assert.equal(r.ok, false, 'expected a validation failure');
  return r.ok ? '' : r.error;
}

const prefix = 'does not match the expected shape: ';

describe('llm/contracts analyst', () => {
  const patch = analystContract('patch', 'failure');

  it('accepts the reference patch-mode reply and keeps unknown fields', () => {
    const reply = {
      batch_size: 8,
      failure_summary: [{ failure_type: 'answer_format', count: 3, description: 'added a period' }],
      patch: {
        reasoning: 'r',
        edits: [
          { op: 'append', content: '- Never end with a period.' },
          { op: 'insert_after', target: '## Rules', content: '- x' },
          { op: 'replace', target: 'old', content: 'new', support_count: 2, source_type: 'failure' },
          { op: 'delete', target: 'stale rule', merge_level: 1 },
        ],
      },
      extra_note: 'kept',
    };
    assert.deepEqual(valid(patch, reply), reply);
  });

  it('normalises op, source_type and support_count', () => {
    const v = valid(patch, {
      batch_size: '4',
      patch: {
        reasoning: null,
        edits: [
          { op: ' Append ', content: 'c', support_count: '3', source_type: 'Failure' },
          { op: 'delete', target: 't', support_count: 0 },
          { op: 'delete', target: 't', support_count: 2.7, target_note: null },
        ],
      },
    });
    assert.equal(v.batch_size, 4);
    assert.equal(v.patch?.reasoning, '');
    assert.deepEqual(v.patch?.edits, [
      { op: 'append', content: 'c', support_count: 3, source_type: 'failure' },
      { op: 'delete', target: 't', support_count: 1 },
      { op: 'delete', target: 't', support_count: 2, target_note: null },
    ]);
  });

  it('treats null target/content as absent', () => {
    const v = valid(patch, {
      patch: { reasoning: 'r', edits: [{ op: 'append', target: null, content: 'c' }] },
    });
    assert.deepEqual(v.patch?.edits, [{ op: 'append', target: undefined, content: 'c' }]);
  });

  it('allows an empty replacement but not a missing one', () => {
    valid(patch, { patch: { reasoning: '', edits: [{ op: 'replace', target: 'x', content: '' }] } });
    assert.equal(
      problem(patch, { patch: { reasoning: '', edits: [{ op: 'replace', target: 'x' }] } }),
      `${prefix}patch.edits[0].content: op "replace" needs a content (the replacement text; "" removes the target)`,
    );
  });

  it('validates each op at parse time', () => {
    const cases: Array<[unknown, string]> = [
      [{ op: 'append', content: '  ' }, 'patch.edits[0].content: op "append" needs a non-empty content'],
      [
        { op: 'insert_after', content: 'c' },
        'patch.edits[0].target: op "insert_after" needs a non-empty target (text to insert after)',
      ],
      [
        { op: 'insert_after', target: 't' },
        'patch.edits[0].content: op "insert_after" needs a non-empty content',
      ],
      [
        { op: 'replace', target: '', content: 'c' },
        'patch.edits[0].target: op "replace" needs a non-empty target (exact text to replace)',
      ],
      [
        { op: 'delete' },
        'patch.edits[0].target: op "delete" needs a non-empty target (exact text to delete)',
      ],
      [
        { op: 'move', target: 't' },
        'patch.edits[0].op: expected one of append, insert_after, replace, delete, got "move"',
      ],
      [{ content: 'c' }, 'patch.edits[0].op: required (one of append, insert_after, replace, delete)'],
      ['append a rule', 'patch.edits[0]: expected an edit object, got a string'],
      [{ op: 'append', content: 5 }, 'patch.edits[0].content: expected a string, got a number'],
      [
        { op: 'append', content: 'c', source_type: 'other' },
        'patch.edits[0].source_type: expected one of failure, success, mixed, got "other"',
      ],
      [
        { op: 'append', content: 'c', support_count: true },
        'patch.edits[0].support_count: expected an integer ≥ 1, got a boolean',
      ],
    ];
    for (const [edit, expected] of cases) {
      assert.equal(problem(patch, { patch: { reasoning: '', edits: [edit] } }), prefix + expected);
    }
  });

  it('requires the patch and its payload list', () => {
    assert.equal(problem(patch, { batch_size: 1 }), `${prefix}patch: required (an object)`);
    assert.equal(
      problem(patch, { patch: { reasoning: 'r', revise_suggestions: [] } }),
      `${prefix}patch.edits: required (a list of edit objects)`,
    );
  });

  it('checks rewrite-mode suggestions', () => {
    const c = analystContract('rewrite_from_suggestions', 'success');
    const item = {
      type: 'Add_Rule',
      title: 't',
      motivation: 'm',
      instruction: 'do x',
      priority_hint: 'HIGH',
    };
    const v = valid(c, {
      batch_size: 2,
      success_patterns: 'one pattern',
      patch: { reasoning: 'r', revise_suggestions: [item] },
    });
    assert.deepEqual(v.success_patterns, ['one pattern']);
    assert.deepEqual(v.patch?.revise_suggestions, [{ ...item, type: 'add_rule', priority_hint: 'high' }]);
    assert.equal(
      problem(c, { patch: { reasoning: '', revise_suggestions: [{ ...item, type: 'rename' }] } }),
      `${prefix}patch.revise_suggestions[0].type: expected one of add_rule, remove_rule, merge_rules, reorganize, compress, clarify, got "rename"`,
    );
    assert.equal(
      problem(c, { patch: { reasoning: '', revise_suggestions: [{ type: 'clarify', instruction: '' }] } }),
      `${prefix}patch.revise_suggestions[0].instruction: must not be empty`,
    );
  });

  it('checks full-rewrite candidates and coerces change_summary', () => {
    const c = analystContract('full_rewrite_minibatch', 'failure');
    const v = valid(c, {
      patch: {
        reasoning: 'r',
        skill_candidates: [{ title: 't', change_summary: 'one change', new_skill: '# S\n' }],
      },
    });
    assert.deepEqual(v.patch?.skill_candidates, [
      { title: 't', change_summary: ['one change'], new_skill: '# S\n' },
    ]);
    assert.equal(
      problem(c, { patch: { reasoning: '', skill_candidates: [{ title: 't', new_skill: ' ' }] } }),
      `${prefix}patch.skill_candidates[0].new_skill: must not be empty`,
    );
  });

  it('accepts an appendix-notes-only reply when skill-aware', () => {
    const c = analystContract('patch', 'failure', { appendixNotes: true });
    const v = valid(c, {
      appendix_notes: ['check units', { note: 'reread the question' }, { content: 'c' }, ' '],
    });
    assert.deepEqual(v.appendix_notes, ['check units', 'reread the question', 'c']);
    assert.equal(v.patch, undefined);
    assert.equal(
      problem(c, { appendix_notes: [] }),
      `${prefix}patch: required (or a non-empty appendix_notes list)`,
    );
  });

  it('describes the expected shape with the mode payload key', () => {
    assert.match(analystContract('patch', 'failure').describe(), /"failure_summary"[\s\S]*"edits": \[/);
    assert.match(
      analystContract('rewrite_from_suggestions', 'success').describe(),
      /"success_patterns"[\s\S]*"revise_suggestions"/,
    );
    assert.match(analystContract('full_rewrite_minibatch', 'failure').describe(), /"skill_candidates"/);
  });
});

describe('llm/contracts merge and ranking', () => {
  it('merge keeps merged-item fields and defaults reasoning', () => {
    const c = mergeContract('patch');
    const items = [
      {
        op: 'append',
        content: 'c',
        support_count: 3,
        source_type: 'success',
        provenance: { minibatch: 'm' },
      },
    ];
    assert.deepEqual(valid(c, { edits: items }), { reasoning: '', edits: items });
    assert.equal(
      problem(c, { reasoning: 'r', edits: {} }),
      `${prefix}edits: expected a list of edit objects, got an object`,
    );
    assert.equal(
      problem(mergeContract('full_rewrite_minibatch'), {
        skill_candidates: [{ new_skill: 'x', source_type: 'both' }],
      }),
      `${prefix}skill_candidates[0].source_type: expected one of failure, success, mixed, got "both"`,
    );
  });

  it('ranking coerces indices and refuses an empty or fractional selection', () => {
    const c = rankingContract();
    assert.deepEqual(valid(c, { reasoning: 'r', selected_indices: [2, '0', 3.0] }), {
      reasoning: 'r',
      selected_indices: [2, 0, 3],
    });
    assert.deepEqual(valid(c, { selected_indices: 4 }).selected_indices, [4]);
    assert.equal(
      problem(c, { selected_indices: [] }),
      `${prefix}selected_indices: select at least one index`,
    );
    assert.equal(
      problem(c, { selected_indices: [1.5] }),
      `${prefix}selected_indices[0]: expected an integer index, got a fraction`,
    );
    assert.equal(
      problem(c, { reasoning: 'r' }),
      `${prefix}selected_indices: required (a list of integer indices)`,
    );
  });

  it('payloadKey maps the update modes', () => {
    assert.equal(payloadKey('patch'), 'edits');
    assert.equal(payloadKey('rewrite_from_suggestions'), 'revise_suggestions');
    assert.equal(payloadKey('full_rewrite_minibatch'), 'skill_candidates');
  });
});

describe('llm/contracts rewrite, slow update, meta skill, appendix', () => {
  it('rewrite coerces change_summary and requires a non-empty new_skill', () => {
    const c = rewriteContract();
    assert.deepEqual(valid(c, { reasoning: 'r', change_summary: 'did x', new_skill: '# Skill\n' }), {
      reasoning: 'r',
      change_summary: ['did x'],
      new_skill: '# Skill\n',
    });
    assert.deepEqual(valid(c, { new_skill: 's' }).change_summary, []);
    assert.equal(
      problem(c, { reasoning: 'r', change_summary: [] }),
      `${prefix}new_skill: required (a string)`,
    );
  });

  it('slow update and meta skill need content', () => {
    assert.deepEqual(valid(slowUpdateContract(), { reasoning: 'r', slow_update_content: 'g' }), {
      reasoning: 'r',
      slow_update_content: 'g',
    });
    assert.equal(
      problem(slowUpdateContract(), { reasoning: 'r', slow_update_content: '' }),
      `${prefix}slow_update_content: must not be empty`,
    );
    assert.equal(
      problem(metaSkillContract(), { reasoning: 'r' }),
      `${prefix}meta_skill_content: required (a string)`,
    );
    assert.equal(metaSkillContract().stage, 'meta_skill');
  });

  it('appendix consolidation accepts strings and note objects', () => {
    const c = appendixConsolidateContract();
    assert.deepEqual(valid(c, { appendix_notes: ['a', { note: 'b' }] }).appendix_notes, ['a', 'b']);
    assert.deepEqual(valid(c, { appendix_notes: 'only one' }).appendix_notes, ['only one']);
    assert.equal(c.stage, 'appendix_consolidate');
    assert.equal(
      problem(c, { appendix_notes: [3] }),
      `${prefix}appendix_notes[0]: expected a string note, got a number`,
    );
  });
});

describe('llm/contracts lr_autonomous', () => {
  it('parses learning_rate like the reference', () => {
    const table: Array<[unknown, number | null]> = [
      [3, 3],
      [3.0, 3],
      [2.5, null],
      [true, null],
      [false, null],
      ['about 5 edits', 5],
      ['-4', 0],
      [-2, 0],
      ['none', null],
      [null, null],
    ];
    for (const [input, expected] of table)
      assert.equal(parseLearningRate(input), expected, JSON.stringify(input));
  });

  it('validates the whole reply', () => {
    const c = lrAutonomousContract();
    assert.deepEqual(
      valid(c, { learning_rate: '2 items', reasoning: 'r', confidence: 0.7, risk_notes: 'one risk' }),
      {
        learning_rate: 2,
        reasoning: 'r',
        confidence: '0.7',
        risk_notes: ['one risk'],
      },
    );
    assert.deepEqual(valid(c, { learning_rate: -1 }), {
      learning_rate: 0,
      reasoning: '',
      confidence: '',
      risk_notes: [],
    });
    assert.equal(
      problem(c, { learning_rate: true }),
      `${prefix}learning_rate: expected a whole number ≥ 0, got a boolean`,
    );
    assert.equal(problem(c, { learning_rate: 1.5 }), `${prefix}learning_rate: expected a whole number ≥ 0`);
  });
});
