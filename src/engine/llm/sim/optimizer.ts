import { simJudge } from './judge';
import { simDescribe } from './triggers';
import type { BackendReply, ChatBackend, ChatMessage, ChatRequest } from '../types';
import { simDeepReflect, simMetaReflect } from './deep';
import { estimateTokens } from './target';
import { LAPSE_HEADING } from '../../prompts/skillAware';
import { habits, harmfulRules, hash, neutralRules, nextTurn, parseTrajectories } from './habits';

type Json = Record<string, unknown>;
type Mode = 'edits' | 'revise_suggestions' | 'skill_candidates';

const tag = '[simulated optimizer]';

function between(text: string, open: string, close: string): string {
  const a = text.indexOf(open);
  if (a < 0) return '';
  const b = text.indexOf(close, a + open.length);
  return b < 0 ? '' : text.slice(a + open.length, b).trim();
}

function fencedJson(text: string): unknown {
  const m = /```json\n([\s\S]*?)\n```/.exec(text);
  if (!m) return undefined;
  try {
    return JSON.parse(m[1]);
  } catch {
    return undefined;
  }
}

function modeOf(system: string): Mode {
  if (system.includes('"revise_suggestions"')) return 'revise_suggestions';
  if (system.includes('"skill_candidates"')) return 'skill_candidates';
  return 'edits';
}

/** Insert before the protected blocks, as an append does, so full rewrites keep them at the tail. */
function addRules(skill: string, rules: string[]): string {
  const marker = skill.search(/<!-- (SLOW_UPDATE|APPENDIX)_START -->/);
  const head = marker >= 0 ? skill.slice(0, marker).trimEnd() : skill.trimEnd();
  const tail = marker >= 0 ? `\n\n${skill.slice(marker)}` : '\n';
  return `${head}\n\n${rules.join('\n')}${tail}`;
}

/**
 * Simulated optimizer. It reads the same prompts a real optimizer gets, diagnoses the simulated
 * target's habits from the failed trajectories, and answers in each contract's JSON. Some of its
 * proposals are unhelpful on purpose (a harmful rounding rule, neutral reminders), so the gate
 * has something to reject. Every reply says it is simulated.
 */
export class SimOptimizerBackend implements ChatBackend {
  readonly provider = 'sim';
  readonly cacheParams = { simulated: true };
  constructor(
    readonly model: string,
    private readonly latencyMs = 0,
  ) {}

  async call(req: ChatRequest): Promise<BackendReply> {
    await nextTurn(this.latencyMs);
    const system = req.messages.find((m) => m.role === 'system')?.content ?? '';
    // The first user message holds the material; a re-ask only adds a correction after the reply.
    const user = req.messages.find((m) => m.role === 'user')?.content ?? '';
    const reply = this.reply(req.stage, system, user, req.messages);
    const text = '```json\n' + JSON.stringify(reply, null, 2) + '\n```';
    const prompt = req.messages.map((m) => m.content).join('\n');
    return {
      text,
      usage: { promptTokens: estimateTokens(prompt), completionTokens: estimateTokens(text) },
      model: this.model,
    };
  }

  private reply(stage: string, system: string, user: string, messages: readonly ChatMessage[]): Json {
    const mode = modeOf(system);
    switch (stage) {
      case 'deep_reflect':
        return simDeepReflect(messages);
      case 'meta_reflect':
        return simMetaReflect(user);
      case 'judge':
        return simJudge(user);
      case 'describe':
        return simDescribe(user);
      case 'analyst':
        return /Failed Trajectories/.test(user)
          ? this.analystFailure(user, mode, system.includes(LAPSE_HEADING))
          : this.analystSuccess(user, mode);
      case 'appendix_consolidate':
        return consolidate(user);
      case 'merge':
        return this.merge(user, mode);
      case 'ranking':
        return this.rank(user);
      case 'rewrite':
        return this.rewrite(user);
      case 'slow_update':
        return this.slowUpdate(user);
      case 'meta_skill':
        return {
          reasoning: `${tag} Summarised which edits the gate accepted this epoch.`,
          meta_skill_content:
            '- Rules that state an exact output format (digits, symbols, order of names) fixed whole task types.\n- Blanket rules about numbers ("round everything") caused regressions; avoid them.',
        };
      case 'lr_autonomous': {
        const n = (user.match(/^\[\d+\] /gm) ?? []).length;
        return {
          learning_rate: Math.min(n, 3),
          reasoning: `${tag} Moderate step.`,
          confidence: 'medium',
          risk_notes: [],
        };
      }
      default:
        return { reasoning: `${tag} no reply for stage ${stage}` };
    }
  }

  private budget(user: string): number {
    return Number(/Propose at most (\d+)/.exec(user)?.[1] ?? 4);
  }

  private items(
    mode: Mode,
    skill: string,
    rules: Array<{ text: string; title: string; support: number }>,
  ): Json[] {
    if (mode === 'skill_candidates') {
      if (rules.length === 0) return [];
      return [
        {
          title: rules.map((r) => r.title).join(' + '),
          change_summary: rules.map((r) => `add rule: ${r.title}`),
          new_skill: addRules(
            skill,
            rules.map((r) => r.text),
          ),
        },
      ];
    }
    if (mode === 'revise_suggestions') {
      return rules.map((r) => ({
        type: 'add_rule',
        title: r.title,
        motivation: `${r.support} trajectories`,
        instruction: r.text,
        priority_hint: r.support > 1 ? 'high' : 'low',
      }));
    }
    const rulesHeading =
      /^## Rules$/m.test(skill) && !/<!-- SLOW_UPDATE_START -->[\s\S]*## Rules/.test(skill);
    // A skill package: every other rule goes to the first editable file the prompt shows.
    const file = /^- (\S+) \(\d+ bytes, editable, shown below\)$/m.exec(skill)?.[1];
    return rules.map((r, i) =>
      file && i % 2 === 0
        ? { op: 'append', file, content: r.text }
        : rulesHeading && hash(r.text) % 2 === 0
          ? { op: 'insert_after', target: '## Rules', content: r.text }
          : { op: 'append', content: r.text },
    );
  }

  private analystFailure(user: string, mode: Mode, skillAware: boolean): Json {
    const skill = between(user, '<current_skill>', '</current_skill>');
    const failures = parseTrajectories(user);
    const found = new Map<string, { text: string; title: string; support: number }>();
    const lapses = new Set<string>();
    let numeric = false;
    for (const t of failures) {
      const habit = habits.find((h) => h.diagnose(t.answer, t.expected));
      if (!habit) continue;
      if (habit.name === 'rounded-measurement' || habit.name === 'missing-currency-symbol') numeric = true;
      // The skill has the rule and the target did not apply it: an execution lapse.
      if (habit.corrected.test(skill)) {
        if (skillAware) lapses.add(lapseNote(habit.name, habit.rules[0]));
        continue;
      }
      const prev = found.get(habit.name);
      found.set(habit.name, { text: habit.rules[0], title: habit.name, support: (prev?.support ?? 0) + 1 });
    }
    const rules = [...found.values()];
    // A plausible-sounding misdiagnosis, on a deterministic subset of minibatches.
    const ids = failures.map((f) => f.id).join(',');
    if (numeric && hash(ids) % 3 === 0 && !harmfulRules[0].effect.test(skill)) {
      rules.push({ text: harmfulRules[0].text, title: 'round-numbers', support: 1 });
    }
    return {
      batch_size: failures.length,
      failure_summary: rules.map((r) => ({
        failure_type: r.title === 'round-numbers' ? 'other' : 'answer_format',
        count: r.support,
        description: `${tag} ${r.title}`,
      })),
      patch: {
        reasoning: `${tag} Diagnosed ${found.size} recurring answer-format habit(s) in ${failures.length} failures.`,
        [mode]: this.items(
          mode,
          skill,
          rules.slice(0, mode === 'skill_candidates' ? rules.length : this.budget(user)),
        ),
      },
      ...(skillAware ? { appendix_notes: [...lapses] } : {}),
    };
  }

  private analystSuccess(user: string, mode: Mode): Json {
    const skill = between(user, '<current_skill>', '</current_skill>');
    const successes = parseTrajectories(user);
    const unused = neutralRules.filter((r) => !skill.includes(r));
    const pick = unused.length && hash(successes.map((s) => s.id).join(',')) % 2 === 0 ? [unused[0]] : [];
    return {
      batch_size: successes.length,
      success_patterns: [`${tag} answers that follow the skill's format rules pass`],
      patch: {
        reasoning: `${tag} ${pick.length ? 'One reminder would make this behaviour explicit.' : 'Nothing missing.'}`,
        [mode]: this.items(
          mode,
          skill,
          pick.map((text) => ({ text, title: 'reminder', support: successes.length })),
        ),
      },
    };
  }

  private merge(user: string, mode: Mode): Json {
    const data = fencedJson(user);
    const patches = Array.isArray(data) ? (data as Json[]) : [];
    const merged = new Map<string, Json>();
    for (const p of patches) {
      const list = Array.isArray(p[mode]) ? (p[mode] as Json[]) : [];
      for (const item of list) {
        const key = JSON.stringify(item.content ?? item.instruction ?? item.new_skill ?? item);
        const prev = merged.get(key);
        const support = Number(item.support_count ?? 1);
        if (prev) prev.support_count = Number(prev.support_count ?? 1) + support;
        else merged.set(key, { ...item, support_count: support, source_type: item.source_type ?? 'failure' });
      }
    }
    const items = [...merged.values()];
    if (mode === 'skill_candidates' && items.length > 1) {
      const skill = between(user, '<current_skill>', '</current_skill>');
      const rules = new Set<string>();
      for (const c of items) {
        for (const line of String(c.new_skill).split('\n'))
          if (line.startsWith('- ') && !skill.includes(line)) rules.add(line);
      }
      return {
        reasoning: `${tag} Combined ${items.length} candidate skills.`,
        skill_candidates: [
          {
            title: 'merged',
            change_summary: [...rules],
            new_skill: addRules(skill, [...rules]),
            source_type: 'mixed',
            support_count: items.length,
          },
        ],
      };
    }
    return {
      reasoning: `${tag} Deduplicated ${patches.length} patches into ${items.length} items.`,
      [mode]: items,
    };
  }

  private rank(user: string): Json {
    const budget = Number(/Select up to (\d+)/.exec(user)?.[1] ?? 1);
    const lines = [...user.matchAll(/^\[(\d+)\] .*support=(\d+)/gm)].map((m) => ({
      i: Number(m[1]),
      support: Number(m[2]),
    }));
    lines.sort((a, b) => b.support - a.support || a.i - b.i);
    return {
      reasoning: `${tag} Ranked by support.`,
      selected_indices: lines.slice(0, budget).map((l) => l.i),
    };
  }

  private rewrite(user: string): Json {
    const skill = between(user, '<current_skill>', '</current_skill>');
    const suggestions = fencedJson(user);
    const list = Array.isArray(suggestions) ? (suggestions as Json[]) : [];
    const rules = list
      .map((s) => (typeof s.instruction === 'string' ? s.instruction : ''))
      .filter((r) => r && !skill.includes(r));
    return {
      reasoning: `${tag} Applied ${rules.length} suggestion(s).`,
      change_summary: rules.map((r) => `added: ${r}`),
      new_skill: addRules(skill, rules),
    };
  }

  private slowUpdate(user: string): Json {
    const failing = [...user.matchAll(/^current: FAIL .*answer "(.*)"$/gm)].length;
    const comparison = user.slice(user.indexOf('## Longitudinal Comparison'));
    const rules: string[] = [];
    for (const block of comparison.split(/^#### /m).slice(1)) {
      if (!/^current: FAIL/m.test(block)) continue;
      const answer = /^current: FAIL .*answer "(.*)"$/m.exec(block)?.[1] ?? '';
      for (const h of habits) {
        const expectedGuess = h.name === 'trailing-period' ? answer.replace(/\.$/, '') : '';
        if (h.corrected.test(user.slice(0, user.indexOf('## Longitudinal')))) continue;
        if (expectedGuess && h.diagnose(answer, expectedGuess) && !rules.includes(h.rules[0]))
          rules.push(h.rules[0]);
      }
    }
    return {
      reasoning: `${tag} ${failing} task(s) still fail; reinforcing the format discipline.`,
      slow_update_content: [
        '- Before answering, check the answer against every format rule above.',
        ...rules,
      ].join('\n'),
    };
  }
}

/** A reminder of an existing rule; it names the habit, which is what the simulated target heeds. */
function lapseNote(name: string, rule: string): string {
  return `${tag} Apply the skill's existing ${name} rule on every answer: ${rule.replace(/^- /, '')}`;
}

/** One note naming every habit the notes remind of (fewer notes, nothing lost for the target). */
function consolidate(user: string): Json {
  const notes = [...user.matchAll(/^\d+\. (.*)$/gm)].map((m) => m[1]);
  const names = habits.map((h) => h.name).filter((n) => notes.some((note) => note.includes(n)));
  const other = notes.filter((note) => !names.some((n) => note.includes(n)));
  return {
    appendix_notes: [
      ...(names.length
        ? [`${tag} Apply the skill's existing rules on every answer (${names.join(', ')}).`]
        : []),
      ...other,
    ],
  };
}
