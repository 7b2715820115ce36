/**
 * Tasks that carry their own assertions (the user's eval files) are scored by them; the others by
 * env.scorer. Deterministic checks read the final answer (the text in the answer tag, else the last
 * line, as every scorer does); the judge reads the whole reply. Score = weighted share of assertions
 * passed; hard = all passed (or the share reaches the task's promptfoo `threshold`).
 */
import { SkillOptError } from '../errors';
import type { TaskItem } from '../data/tasks';
import { runCheck, type Assertion } from './assertions';
import type { Judge } from './judge';
import type { ScoredReply, Scorer, ScoreResult } from './scorers';
import { quote } from './syncScorer';

export function withAssertions(base: Scorer, judge: Judge | undefined): Scorer {
  return {
    name: `assertions (else ${base.name})`,
    ...(base.extract ? { extract: base.extract } : {}),
    async score(prediction, item, signal, reply) {
      const assertions = item.assertions;
      if (!assertions?.length) return base.score(prediction, item, signal, reply);
      return scoreAssertions(assertions, prediction, reply ?? { text: prediction }, item, judge);
    },
  };
}

async function scoreAssertions(
  assertions: readonly Assertion[],
  answer: string,
  reply: ScoredReply,
  item: TaskItem,
  judge: Judge | undefined,
): Promise<ScoreResult> {
  const rubrics = assertions.filter((a) => a.kind === 'judge');
  let grades: Array<{ passed: boolean; evidence: string }> = [];
  if (rubrics.length) {
    if (!judge) {
      throw new SkillOptError('internal', `task "${item.id}" has expectations but no judge was set up`, {
        fix: 'this is a bug in SkillOpt; please report it',
      });
    }
    // Not cancelled with the run (like the built-in scorers): the target's reply is paid for, and a
    // grade that arrives as the run stops keeps it, so a resumed run pays for neither again.
    grades = await judge.grade(
      item,
      reply,
      rubrics.map((r) => r.rubric),
    );
  }
  let judged = 0;
  const outcomes = assertions.map((a) => {
    if (a.kind === 'check') return { a, passed: runCheck(a, answer), note: '' };
    const g = grades[judged++];
    return { a, passed: g.passed, note: g.evidence };
  });
  const total = outcomes.reduce((s, o) => s + o.a.weight, 0);
  const got = outcomes.reduce((s, o) => s + (o.passed ? o.a.weight : 0), 0);
  const allPassed = outcomes.every((o) => o.passed);
  const soft = total > 0 ? got / total : allPassed ? 1 : 0;
  const pass = item.passThreshold !== undefined ? soft >= item.passThreshold : allPassed;
  const failed = outcomes.filter((o) => !o.passed);
  const passedCount = outcomes.length - failed.length;
  const reason = failed.length
    ? `${passedCount}/${outcomes.length} assertions passed; failed: ${failed
        .map((o) => `${o.a.label}${o.note ? ` (${o.note})` : ''}`)
        .join('; ')}`
    : `all ${outcomes.length} assertions passed on ${quote(answer)}`;
  return { hard: pass ? 1 : 0, soft, reason };
}
