/**
 * The activation track's plan, checked before anything is spent: where the trigger queries come
 * from and how they are split, how runs reach the target, and the description limits. Every
 * combination that cannot work is refused here with the key, the reason and what to do instead.
 */
import type { CallEstimate } from '../callEstimate';
import type { SkillOptConfig } from '../config/schema';
import type { TaskItem } from '../data/tasks';
import { SkillOptError } from '../errors';
import { parseFrontMatter } from '../skill/frontMatter';
import { hostChars } from '../skill/lint';
import type { TriggerMode } from './evaluate';
import { readTriggerFile, splitTriggers, triggersFromTasks, type TriggerSplit } from './queries';

export interface ActivationPlan {
  split: TriggerSplit;
  /** Where the queries came from, for messages and the report. */
  source: string;
  mode: TriggerMode;
  repeats: number;
  maxDescriptionChars: number;
  hostBudgetChars: number;
}

export interface PreparedActivation {
  plan?: ActivationPlan;
  notices: string[];
}

function refuse(key: string, problem: string, fix: string): never {
  throw new SkillOptError('config', problem, { key: `activation.${key}`, fix });
}

/** The target's kind as buildModels resolved it (ModelClient.backend). */
function modeFor(cfg: SkillOptConfig, targetBackend: string): TriggerMode {
  if (targetBackend === 'command') {
    if (cfg.model.target_command) {
      refuse(
        'enabled',
        'a custom target command cannot tell whether it loaded the skill (it prints plain text, no events)',
        'use target_backend claude_code_exec, codex_exec or copilot_exec, or a chat target, for the activation track; or set activation.enabled: false',
      );
    }
    return 'agent';
  }
  if (targetBackend === 'vscode-lm') {
    refuse(
      'enabled',
      'the vscode-lm target is not offered the skill-loading function, so a load cannot be seen',
      'use an agent CLI target (claude_code_exec, codex_exec, copilot_exec) or an openai / anthropic target for the activation track; or set activation.enabled: false',
    );
  }
  return 'chat';
}

/**
 * The plan for `cfg`, or only notices when the track is off. `pool` is the task rows with
 * `should_trigger` (splits.ts keeps them out of the body splits); `sealed` a split folder's test/
 * rows, only counted (they never become trigger queries); `skill` the initial SKILL.md text.
 */
export function prepareActivation(
  cfg: SkillOptConfig,
  pool: readonly TaskItem[],
  skill: string,
  targetBackend: string,
  sealed: readonly TaskItem[] = [],
): PreparedActivation {
  const a = cfg.activation;
  const fromTasks = triggersFromTasks(pool);
  const notices: string[] = [];
  const inTest = triggersFromTasks(sealed).length;
  if (inTest && a.enabled && !a.trigger_file)
    notices.push(
      `activation: ${inTest} row${inTest === 1 ? '' : 's'} with should_trigger in the test split folder ${inTest === 1 ? 'is' : 'are'} not a trigger query (the test split stays sealed)`,
    );
  if (!a.enabled) {
    if (a.trigger_file || fromTasks.length)
      notices.push(
        `activation.enabled is false: the ${a.trigger_file ? `trigger queries in ${a.trigger_file}` : `${fromTasks.length} task rows with should_trigger (trigger queries, never body tasks)`} are not used (set activation.enabled: true to train the description)`,
      );
    return { notices };
  }
  const mode = modeFor(cfg, targetBackend);
  if (a.max_description_chars > a.host_budget_chars) {
    refuse(
      'max_description_chars',
      `max_description_chars (${a.max_description_chars}) is above host_budget_chars (${a.host_budget_chars}): the host would cut such a description`,
      'lower activation.max_description_chars or raise activation.host_budget_chars',
    );
  }
  const fm = parseFrontMatter(skill);
  const description = fm?.description?.trim();
  if (!description) {
    // Said precisely: a description that is there but unreadable is fixed differently from none.
    const why = !fm
      ? 'SKILL.md does not start with a --- front-matter block'
      : fm.errors.length
        ? `its front matter is not valid YAML (line ${(fm.errors[0]?.line ?? 0) + 1}: ${fm.errors[0]?.message ?? ''})`
        : 'description' in fm.data && typeof fm.data.description !== 'string'
          ? `its description is not text (${Array.isArray(fm.data.description) ? 'a list' : typeof fm.data.description}); quote it or write it as one string`
          : 'description' in fm.data
            ? 'its description is empty'
            : 'its front matter has no description key';
    throw new SkillOptError('skill', `the skill has no front-matter description to train: ${why}`, {
      key: 'activation.enabled',
      fix: 'start SKILL.md with ---, name: <folder name>, description: <when to use it>, --- ; or set activation.enabled: false',
    });
  }
  if (hostChars(description) > a.max_description_chars) {
    throw new SkillOptError(
      'skill',
      `the skill's description has ${hostChars(description)} characters, above activation.max_description_chars (${a.max_description_chars})`,
      {
        key: 'activation.max_description_chars',
        fix: 'shorten the description in SKILL.md, or raise the limit (at most 1024)',
      },
    );
  }
  let queries = fromTasks;
  let source = `${fromTasks.length} task rows with should_trigger`;
  if (a.trigger_file) {
    queries = readTriggerFile(a.trigger_file, notices);
    source = a.trigger_file;
    if (fromTasks.length)
      notices.push(
        `activation: the trigger queries come from ${a.trigger_file}; the ${fromTasks.length} task rows with should_trigger are not used (nor trained as body tasks)`,
      );
  }
  if (queries.length === 0) {
    refuse(
      'trigger_file',
      'the activation track has no trigger queries',
      'set activation.trigger_file to a JSON list of {"query": "...", "should_trigger": true|false}, or give tasks a should_trigger field',
    );
  }
  const ids = new Set<string>();
  for (const q of queries) {
    if (ids.has(q.id))
      refuse(
        'trigger_file',
        `trigger query id "${q.id}" is used twice in ${source}`,
        'give every query a unique id',
      );
    ids.add(q.id);
  }
  const split = splitTriggers(queries, a.train_share, cfg.train.seed);
  if (split.train.length === 0 || split.heldOut.length === 0) {
    refuse(
      'train_share',
      `${queries.length} trigger queries split ${split.train.length} train / ${split.heldOut.length} held out: the optimizer and the gate each need at least one`,
      'add trigger queries (at least two of a kind), or change activation.train_share',
    );
  }
  if (mode === 'agent' && cfg.model.target_delivery === 'pointer')
    notices.push(
      'activation: trigger queries run with native delivery (the query alone), so the description decides; model.target_delivery: pointer applies to the task rollouts only',
    );
  const runs = queries.length * a.repeats;
  notices.push(
    `activation: ${split.train.length} train / ${split.heldOut.length} held-out trigger queries from ${source}, ${a.repeats} runs each: up to ${runs * 2} target runs per epoch (current and candidate description)`,
  );
  return {
    plan: {
      split,
      source,
      mode,
      repeats: a.repeats,
      maxDescriptionChars: a.max_description_chars,
      hostBudgetChars: a.host_budget_chars,
    },
    notices,
  };
}

/**
 * The track's calls at most over the run, added to the call estimate: every epoch runs every query
 * `repeats` times for the current and the candidate description, and asks the optimizer once.
 */
export function withActivationCalls(
  estimate: CallEstimate,
  plan: ActivationPlan | undefined,
  epochs: number,
): CallEstimate {
  if (!plan) return estimate;
  const trigger = (plan.split.train.length + plan.split.heldOut.length) * plan.repeats * 2 * epochs;
  return {
    ...estimate,
    once: { ...estimate.once, trigger, describe: epochs },
    total: estimate.total + trigger + epochs,
  };
}
