import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  MAX_TASK_ROWS,
  evaluationChildren,
  evaluationNode,
  evaluationsIn,
  runEvaluations,
} from '../../../src/extension/runs/evalNodes';
import { aaCheckOf } from '../../support/gateTest';

/** An eval-only folder as `skillopt eval` writes it: eval_summary.json and eval_<split>/results.jsonl. */
function evalFolder(
  root: string,
  name: string,
  rows: Array<{ id: string; hard: number; errored?: boolean }>,
  extra: object = {},
): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'eval_val'), { recursive: true });
  const failing = rows.filter((r) => !r.errored && !r.hard).map((r) => r.id);
  const errored = rows.filter((r) => r.errored).map((r) => r.id);
  writeFileSync(
    join(dir, 'eval_summary.json'),
    JSON.stringify({
      skill: '/w/.claude/skills/pdf/SKILL.md',
      split: 'val',
      n_items: rows.length,
      hard: 0.5,
      soft: 0.6,
      by_type: { general: { hard: 0.5, soft: 0.6, total: rows.length - errored.length } },
      failing,
      ...(errored.length ? { errored } : {}),
      out_dir: dir,
      model_calls: rows.length,
      dollars: 0.0123,
      ...extra,
    }),
  );
  writeFileSync(
    join(dir, 'eval_val', 'results.jsonl'),
    rows
      .map((r) =>
        JSON.stringify({
          id: r.id,
          hard: r.hard,
          soft: r.hard,
          predicted_answer: r.hard ? 'yes' : 'no',
          expected: ['yes'],
          task_description: `question ${r.id}`,
          ...(r.errored ? { outcome: 'errored', error_kind: 'auth' } : {}),
        }),
      )
      .join('\n') + '\n',
  );
  return dir;
}

describe('Runs tree: evaluations', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'skillopt-evalnodes-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('lists evaluations newest first, with score, answered share, failing count and spend', () => {
    const old = evalFolder(root, 'a', [{ id: 'q1', hard: 1 }]);
    evalFolder(root, 'b', [
      { id: 'q1', hard: 1 },
      { id: 'q2', hard: 0 },
      { id: 'q3', hard: 0, errored: true },
    ]);
    utimesSync(join(old, 'eval_summary.json'), new Date(2020, 1, 1), new Date(2020, 1, 1));
    mkdirSync(join(root, 'not-an-eval'));
    const evals = evaluationsIn(root);
    assert.deepEqual(
      evals.map((e) => e.dir),
      [join(root, 'b'), old],
    );
    const node = evaluationNode(evals[0], '');
    assert.equal(node.label, 'pdf/SKILL.md on val');
    assert.match(node.description ?? '', /^0\.500 fully right · 2 of 3 answered · 1 failing · /);
    assert.match(
      node.tooltip ?? '',
      /Score: 0\.500 fully right · 0\.\d+ with partial credit\nNot answered by the target \(not scored\): 1\nSpend: 3 target calls, \$0\.0123/,
    );
  });

  it('shows the report, then unanswered, failing and passing tasks, each opening its conversation', () => {
    const dir = evalFolder(root, 'b', [
      { id: 'q1', hard: 1 },
      { id: 'q2', hard: 0 },
      { id: 'q3', hard: 0, errored: true },
    ]);
    const [e] = evaluationsIn(root);
    const kids = evaluationChildren(e, '');
    assert.deepEqual(
      kids.map((k) => k.label),
      ['Report', 'q3', 'q2', 'q1'],
    );
    assert.deepEqual(kids[0].command?.arguments, [dir]);
    assert.match(kids[1].description ?? '', /^not answered · not answered \(auth\), expected \["yes"\]/);
    assert.match(kids[2].description ?? '', /^failed · answered "no", expected \["yes"\]/);
    assert.match(kids[3].description ?? '', /^passed/);
    assert.equal(
      kids[2].command?.arguments?.[0],
      join(dir, 'eval_val', 'predictions', 'q2', 'conversation.json'),
    );
  });

  it('keeps a long evaluation readable: the first rows, then one line counting the rest', () => {
    evalFolder(
      root,
      'big',
      Array.from({ length: MAX_TASK_ROWS + 5 }, (_, i) => ({
        id: `t${String(i).padStart(3, '0')}`,
        hard: 1,
      })),
    );
    const kids = evaluationChildren(evaluationsIn(root)[0], '');
    assert.equal(kids.length, 1 + MAX_TASK_ROWS + 1);
    assert.equal(kids.at(-1)?.label, '5 more tasks (passing) in results.jsonl');
  });

  it("finds a run's own evaluations in its eval_only folder", () => {
    mkdirSync(join(root, 'eval_only'));
    evalFolder(join(root, 'eval_only'), 'best_skill_test', [{ id: 'q1', hard: 1 }]);
    assert.equal(runEvaluations(root).length, 1);
  });

  it('shows an A/A check on its evaluation row and as a row of its own that opens the report', () => {
    const aa = aaCheckOf(4, 5);
    const dir = evalFolder(root, 'aa', [{ id: 'q1', hard: 1 }], { aa });
    const [e] = evaluationsIn(root);
    const node = evaluationNode(e!, '');
    assert.match(
      node.description ?? '',
      /^A\/A ×4: strict gate accepts 5 of 12 \(42%\), paired 0 · 0\.500 fully right/,
    );
    assert.match(node.tooltip ?? '', /would accept the skill over itself in 5 of 12 comparisons \(42%\)/);
    const kids = evaluationChildren(e!, '');
    assert.deepEqual(
      kids.map((k) => k.label),
      ['Report', 'A/A check', 'q1'],
    );
    assert.equal(kids[1]!.icon?.id, 'warning', 'a strict accept of the same skill is noise');
    assert.match(kids[1]!.tooltip ?? '', /paired gate \(alpha 0\.05\): 0 accepted \(0%\), 3 inconclusive/);
    assert.deepEqual(kids[1]!.command?.arguments, [dir]);
  });
});
