/**
 * Differential tests: our scorers against the reference's own evaluators. The fixtures in
 * test/fixtures/benchmarks hold probe inputs and the values the reference's Python functions returned
 * for them (each file names the commit and the functions); nothing here is computed by our code.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskItem } from '../../../src/engine/data/tasks';
import { extractAnswer } from '../../../src/engine/scoring/extract';
import { normalizeOfficeQa } from '../../../src/engine/scoring/officeqa';
import { createScorer } from '../../../src/engine/scoring/scorers';

const fixtures = join(__dirname, '..', '..', 'fixtures', 'benchmarks');
export function readProbes<T>(name: string): T {
  return JSON.parse(readFileSync(join(fixtures, name), 'utf8')) as T;
}
const item = (answers: string[], extra: Partial<TaskItem> = {}): TaskItem => ({
  id: 'probe',
  input: 'question',
  answers,
  fields: {},
  ...extra,
});
const close = (a: number, b: number, what: string): void =>
  assert.ok(Math.abs(a - b) < 1e-12, `${what}: ours ${a}, reference ${b}`);
const ctx = { baseDir: __dirname };

describe('scorers agree with the reference evaluators (probe fixtures)', () => {
  it('SearchQA: answer extraction, EM (hard) and token F1 (soft)', async () => {
    const { cases } = readProbes<{
      cases: { response: string; golds: string[]; predicted: string; hard: number; soft: number }[];
    }>('searchqa.json');
    const scorer = createScorer('normalized_exact', ctx);
    for (const c of cases) {
      const predicted = extractAnswer(c.response).answer;
      assert.equal(predicted, c.predicted, `extraction of ${JSON.stringify(c.response)}`);
      const r = await scorer.score(predicted, item(c.golds));
      assert.equal(r.hard, c.hard, `hard for ${JSON.stringify(c.response)} vs ${JSON.stringify(c.golds)}`);
      close(r.soft, c.soft, `soft for ${JSON.stringify(c.response)}`);
    }
  });

  it('DocVQA: ANLS with the 0.5 threshold (soft), ANLS ≥ 0.999 (hard)', async () => {
    const { cases } = readProbes<{
      cases: { response: string; golds: string[]; predicted: string; anls: number; hard: number }[];
    }>('docvqa-scoring.json');
    const scorer = createScorer('anls', ctx);
    for (const c of cases) {
      // The rollout reads the answer with the scorer's own extraction.
      const predicted = scorer.extract!(c.response, 'answer').answer;
      assert.equal(predicted, c.predicted, `extraction of ${JSON.stringify(c.response)}`);
      const r = await scorer.score(predicted, item(c.golds));
      close(r.soft, c.anls, `ANLS of ${JSON.stringify(predicted)} vs ${JSON.stringify(c.golds)}`);
      assert.equal(r.hard, c.hard, `hard of ${JSON.stringify(predicted)}`);
    }
  });

  it('LiveMathematicianBench: the choice label the reference reads, and its verdict', async () => {
    const { scoring } = readProbes<{
      scoring: {
        response: string;
        choices: { label: string; text: string }[];
        correct: string;
        hard: number;
      }[];
    }>('livemath.json');
    const scorer = createScorer('choice', ctx);
    for (const c of scoring) {
      const predicted = extractAnswer(c.response).answer;
      const task = item([c.correct], {
        choices: c.choices.map((x) => x.text),
        choiceLabels: c.choices.map((x) => x.label),
      });
      const r = await scorer.score(predicted, task);
      assert.equal(r.hard, c.hard, `${JSON.stringify(c.response)} against ${c.correct}: ${r.reason}`);
      assert.equal(r.soft, c.hard);
    }
  });

  it('OfficeQA: its normaliser, EM (hard) and token F1 (soft)', async () => {
    const { cases } = readProbes<{
      cases: {
        answer: string;
        gold: string;
        normalized_answer: string;
        normalized_gold: string;
        hard: number;
        soft: number;
      }[];
    }>('officeqa.json');
    const scorer = createScorer('officeqa', ctx);
    for (const c of cases) {
      assert.equal(normalizeOfficeQa(c.answer), c.normalized_answer, JSON.stringify(c.answer));
      assert.equal(normalizeOfficeQa(c.gold), c.normalized_gold, JSON.stringify(c.gold));
      const r = await scorer.score(c.answer, item([c.gold]));
      assert.equal(r.hard, c.hard, `${JSON.stringify(c.answer)} vs ${JSON.stringify(c.gold)}`);
      close(r.soft, c.soft, `F1 of ${JSON.stringify(c.answer)} vs ${JSON.stringify(c.gold)}`);
    }
  });

  it('OfficeQA: the final answer read from whole replies (first pair; no tag, no answer)', async () => {
    const { responses } = readProbes<{
      responses: { response: string; gold: string; predicted: string; hard: number; soft: number }[];
    }>('officeqa.json');
    const scorer = createScorer('officeqa', ctx);
    for (const c of responses) {
      const predicted = scorer.extract!(c.response, 'answer').answer;
      assert.equal(predicted, c.predicted, JSON.stringify(c.response));
      const r = await scorer.score(predicted, item([c.gold]));
      assert.equal(r.hard, c.hard, JSON.stringify(c.response));
      close(r.soft, c.soft, JSON.stringify(c.response));
    }
  });

  it('SearchQA and LiveMathematicianBench: answers read across the line breaks and blanks Python knows', async () => {
    const { choices, cases } = readProbes<{
      choices: { label: string; text: string }[];
      cases: {
        response: string;
        extracted: string;
        searchqa_hard_vs_Paris: number;
        choice_label: string;
        choice_hard_vs_B: number;
      }[];
    }>('extract-linebreaks.json');
    const searchqa = createScorer('normalized_exact', ctx);
    const choice = createScorer('choice', ctx);
    const task = item(['B'], {
      choices: choices.map((c) => c.text),
      choiceLabels: choices.map((c) => c.label),
    });
    for (const c of cases) {
      const what = JSON.stringify(c.response);
      const predicted = extractAnswer(c.response).answer;
      assert.equal(predicted, c.extracted, `extraction of ${what}`);
      assert.equal((await searchqa.score(predicted, item(['Paris']))).hard, c.searchqa_hard_vs_Paris, what);
      const r = await choice.score(predicted, task);
      assert.equal(r.hard, c.choice_hard_vs_B, `${what} (the reference read ${c.choice_label}): ${r.reason}`);
    }
  });
});
