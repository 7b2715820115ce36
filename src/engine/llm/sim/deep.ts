/**
 * Simulated optimizer replies for deep reflection and meta reflect. Like the rest of the sim
 * optimizer they read only the prompts a real model gets, diagnose the simulated target's habits,
 * and answer in each contract's JSON, deterministically. Deep reflection states one plausible but
 * spurious hypothesis on purpose (a task type is "just harder"), so the refinement round has
 * something to drop when a success of that type contradicts it.
 */
import { extractJson } from '../json';
import type { ChatMessage } from '../types';
import { DEEP_FIRST_TURN_HEADING, DEEP_PATCH_HEADING, DEEP_REFINE_HEADING } from '../../prompts/deep';
import { habits, harmfulRules, parseTrajectories, type Habit, type Trajectory } from './habits';

type Json = Record<string, unknown>;
type Mode = 'edits' | 'revise_suggestions' | 'skill_candidates';

const tag = '[simulated optimizer]';
const REASK = 'That reply could not be used';
/** Where meta reflect gathers the rules that the epoch's kept steps added. */
export const CONSOLIDATED_HEADING = '## Rules Learned in Training';

interface SimHypothesis {
  cause: string;
  evidence_ids: string[];
  confidence: 'low' | 'medium' | 'high';
}

function between(text: string, open: string, close: string): string {
  const a = text.indexOf(open);
  if (a < 0) return '';
  const b = text.indexOf(close, a + open.length);
  return b < 0 ? '' : text.slice(a + open.length, b).trim();
}

function budgetOf(text: string): number {
  return Number(/Propose at most (\d+)/.exec(text)?.[1] ?? 4);
}

function modeOf(text: string): Mode {
  if (text.includes('"revise_suggestions"')) return 'revise_suggestions';
  if (text.includes('"skill_candidates"')) return 'skill_candidates';
  return 'edits';
}

/** Insert before the protected blocks, so a full rewrite keeps them at the tail. */
function addRules(skill: string, rules: string[]): string {
  const marker = skill.search(/<!-- (SLOW_UPDATE|APPENDIX)_START -->/);
  const head = marker >= 0 ? skill.slice(0, marker).trimEnd() : skill.trimEnd();
  const tail = marker >= 0 ? `\n\n${skill.slice(marker)}` : '\n';
  return `${head}\n\n${rules.join('\n')}${tail}`;
}

function habitOfCause(cause: string): Habit | undefined {
  return habits.find((h) => cause.startsWith(`${h.name}:`));
}

const spurious = /^task-type: "(.*)"/;

function hypothesesOf(text: string | undefined): SimHypothesis[] {
  const parsed = text === undefined ? undefined : extractJson(text);
  if (!parsed?.ok) return [];
  const list = parsed.value.hypotheses;
  return Array.isArray(list) ? (list as SimHypothesis[]) : [];
}

/** The conversation's material and the turn being answered (re-asks repeat the turn). */
function conversation(messages: readonly ChatMessage[]): {
  material: string;
  turn: string;
  previous: SimHypothesis[];
} {
  const material = messages.find((m) => m.role === 'user')?.content ?? '';
  let at = messages.length - 1;
  while (at > 0 && !(messages[at].role === 'user' && !messages[at].content.startsWith(REASK))) at--;
  const turn = messages[at]?.content ?? '';
  const answered = messages.slice(0, at).filter((m) => m.role === 'assistant');
  return { material, turn, previous: hypothesesOf(answered.at(-1)?.content) };
}

function sections(material: string): { skill: string; failed: Trajectory[]; succeeded: Trajectory[] } {
  const failStart = material.indexOf('## Failed Trajectories');
  const succStart = material.indexOf('## Successful Trajectories');
  const end = material.indexOf(DEEP_FIRST_TURN_HEADING);
  return {
    skill: between(material, '<current_skill>', '</current_skill>'),
    failed:
      failStart >= 0 ? parseTrajectories(material.slice(failStart, succStart >= 0 ? succStart : end)) : [],
    succeeded: succStart >= 0 ? parseTrajectories(material.slice(succStart, end >= 0 ? end : undefined)) : [],
  };
}

function firstHypotheses(skill: string, failed: Trajectory[]): Json {
  const byHabit = new Map<string, string[]>();
  for (const t of failed) {
    const habit = habits.find((h) => h.diagnose(t.answer, t.expected));
    if (!habit || habit.corrected.test(skill)) continue;
    byHabit.set(habit.name, [...(byHabit.get(habit.name) ?? []), t.id]);
  }
  const hypotheses: SimHypothesis[] = [...byHabit].map(([name, ids]) => ({
    cause: `${name}: the failed answers share this habit and no rule in the skill corrects it`,
    evidence_ids: ids,
    confidence: ids.length > 1 ? 'high' : 'medium',
  }));
  const byType = new Map<string, string[]>();
  for (const t of failed) if (t.type) byType.set(t.type, [...(byType.get(t.type) ?? []), t.id]);
  const top = [...byType].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]))[0];
  if (top) {
    hypotheses.push({
      cause: `task-type: "${top[0]}" tasks are harder for the model than the others`,
      evidence_ids: top[1],
      confidence: 'low',
    });
  }
  return {
    reasoning: `${tag} ${byHabit.size} answer-format habit(s) recur across ${failed.length} failures.`,
    hypotheses,
  };
}

function refine(previous: SimHypothesis[], succeeded: Trajectory[]): Json {
  const dropped: string[] = [];
  const kept = previous.filter((h) => {
    const type = spurious.exec(h.cause)?.[1];
    const contra = type === undefined ? [] : succeeded.filter((s) => s.type === type).map((s) => s.id);
    if (contra.length) dropped.push(`"${h.cause}" (contradicted by ${contra.join(', ')})`);
    return contra.length === 0;
  });
  return {
    reasoning: dropped.length
      ? `${tag} Dropped ${dropped.join('; ')}: successes of the same kind pass.`
      : `${tag} Every hypothesis survives the successes; no change.`,
    hypotheses: kept,
  };
}

function patch(skill: string, failed: Trajectory[], previous: SimHypothesis[], turn: string): Json {
  const mode = modeOf(turn);
  const found: Array<{ habit: Habit; support: number }> = [];
  for (const h of previous) {
    const habit = habitOfCause(h.cause);
    if (habit && !habit.corrected.test(skill) && !found.some((f) => f.habit === habit))
      found.push({ habit, support: h.evidence_ids.length });
  }
  const chosen = mode === 'skill_candidates' ? found : found.slice(0, budgetOf(turn));
  const rules = chosen.map((f) => f.habit.rules[0]);
  let items: Json[];
  if (mode === 'skill_candidates') {
    items = rules.length
      ? [
          {
            title: chosen.map((f) => f.habit.name).join(' + '),
            change_summary: chosen.map((f) => `add rule: ${f.habit.name}`),
            new_skill: addRules(skill, rules),
          },
        ]
      : [];
  } else if (mode === 'revise_suggestions') {
    items = chosen.map((f) => ({
      type: 'add_rule',
      title: f.habit.name,
      motivation: `${f.support} trajectories share the cause`,
      instruction: f.habit.rules[0],
      priority_hint: f.support > 1 ? 'high' : 'medium',
    }));
  } else {
    items = rules.map((content) => ({ op: 'append', content }));
  }
  return {
    batch_size: failed.length,
    failure_summary: previous.map((h) => ({
      failure_type: habitOfCause(h.cause) ? 'answer_format' : 'other',
      count: h.evidence_ids.length,
      description: `${tag} ${h.cause}`,
    })),
    patch: {
      reasoning: `${tag} ${rules.length} rule(s) address the systemic causes that survived refinement.`,
      [mode]: items,
    },
  };
}

/** Reply of the `deep_reflect` stage, from the whole conversation so far. */
export function simDeepReflect(messages: readonly ChatMessage[]): Json {
  const { material, turn, previous } = conversation(messages);
  const { skill, failed, succeeded } = sections(material);
  if (turn.includes(DEEP_PATCH_HEADING)) return patch(skill, failed, previous, turn);
  if (turn.includes(DEEP_REFINE_HEADING)) return refine(previous, succeeded);
  return firstHypotheses(skill, failed);
}

interface TriedLine {
  fate: string;
  content: string;
}

/** Rule lines of the skill outside its protected blocks. */
function ruleLines(skill: string): string[] {
  const open = skill.replace(/<!-- (\w+)_START -->[\s\S]*?<!-- \1_END -->/g, '');
  return open
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('- '));
}

function occurrences(text: string, part: string): number {
  return part ? text.split(part).length - 1 : 0;
}

/**
 * Reply of the `meta_reflect` stage: delete rules the epoch's rejections (or the known harmful
 * rounding rule) show do not help, then, budget permitting, gather the rules the kept steps added
 * under one heading.
 */
export function simMetaReflect(user: string): Json {
  const skill = between(user, '<current_skill>', '</current_skill>');
  const budget = budgetOf(user);
  const tried: TriedLine[] = [];
  for (const m of user.matchAll(
    /^\s*\d+\. \[[\w-]+\] (.+?) target=("(?:[^"\\]|\\.)*") content=("(?:[^"\\]|\\.)*")$/gm,
  )) {
    tried.push({ fate: m[1], content: JSON.parse(m[3]) as string });
  }
  const linesOf = (fates: string[]): Set<string> =>
    new Set(
      tried
        .filter((t) => fates.includes(t.fate))
        .flatMap((t) => t.content.split('\n').map((l) => l.trim()))
        .filter((l) => l.startsWith('- ')),
    );
  const kept = linesOf(['kept']);
  const rejected = linesOf(['rejected by the gate', 'turned down by the person']);
  const unique = (l: string): boolean => occurrences(skill, l) === 1;
  const target = (l: string): string => (occurrences(skill, `${l}\n`) === 1 ? `${l}\n` : l);

  const rules = ruleLines(skill).filter(unique);
  const unhelpful = rules.filter(
    (l) => (rejected.has(l) && !kept.has(l)) || harmfulRules.some((h) => h.effect.test(l)),
  );
  const edits: Json[] = unhelpful.slice(0, budget).map((l) => ({ op: 'delete', target: target(l) }));
  const notes: string[] = [];
  if (edits.length)
    notes.push(`removed ${edits.length} rule(s) that only came with rejected or harmful changes`);

  const room = budget - edits.length;
  const gather = rules.filter((l) => kept.has(l) && !unhelpful.includes(l)).slice(0, room - 1);
  if (gather.length >= 2 && !skill.includes(CONSOLIDATED_HEADING)) {
    for (const l of gather) edits.push({ op: 'delete', target: target(l) });
    edits.push({ op: 'append', content: `${CONSOLIDATED_HEADING}\n\n${gather.join('\n')}` });
    notes.push(`gathered ${gather.length} rule(s) the gate kept under one heading`);
  }
  return {
    reasoning: `${tag} ${notes.length ? `${notes.join('; ')}.` : 'The skill is already well organised.'}`,
    edits,
  };
}
