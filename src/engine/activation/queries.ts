/**
 * The activation track's trigger queries: a request a user might type, and whether the skill
 * should load for it. They come from `activation.trigger_file` (skill-creator's trigger-eval shape,
 * `[{"query": "...", "should_trigger": true}]`, as JSON, JSONL, YAML, or CSV/TSV with true/false
 * cells) or from the task rows that carry `should_trigger` (never body tasks; a split folder's test/
 * rows stay sealed), and are split once, seeded, into the queries the optimizer sees and the
 * held-out ones the gate decides on.
 */
import { SkillOptError } from '../errors';
import { PyRandom } from '../data/pyRandom';
import { noteTriggerUnread } from '../data/evalUnread';
import { readTaskRecords } from '../data/taskFiles';
import type { TaskItem } from '../data/tasks';

export interface TriggerQuery {
  id: string;
  query: string;
  shouldTrigger: boolean;
}

export interface TriggerSplit {
  train: TriggerQuery[];
  heldOut: TriggerQuery[];
}

const QUERY_FIELDS = ['query', 'prompt', 'question', 'input'] as const;

/** The trigger queries of a skill-creator-style trigger file; a field not read adds to `notices`. */
export function readTriggerFile(path: string, notices: string[] = []): TriggerQuery[] {
  const file = readTaskRecords(path);
  const out: TriggerQuery[] = [];
  const unread = new Set<string>();
  for (const [i, { record, line, key }] of file.records.entries()) {
    const place = { file: path, ...(line !== undefined ? { line } : {}), key: key ?? `[${i}]` };
    const field = QUERY_FIELDS.find((f) => typeof record[f] === 'string' && record[f].trim());
    if (!field) {
      throw new SkillOptError('tasks', 'a trigger query has no text', {
        ...place,
        fix: 'give every entry a "query" string, as in [{"query": "...", "should_trigger": true}]',
      });
    }
    const should = record.should_trigger;
    if (typeof should !== 'boolean') {
      const problem =
        should === undefined
          ? 'a trigger query has no should_trigger: true or false'
          : `a trigger query has should_trigger ${JSON.stringify(should)}, not true or false`;
      throw new SkillOptError('tasks', problem, {
        ...place,
        fix: 'add "should_trigger": true (the skill should load) or false (it should not); in JSON or YAML a boolean, not text',
      });
    }
    const id =
      typeof record.id === 'string' || typeof record.id === 'number' ? String(record.id) : `q${i + 1}`;
    out.push({ id, query: String(record[field]).trim(), shouldTrigger: should });
    noteTriggerUnread(record, ['id', field], unread);
  }
  notices.push(...[...unread].map((n) => `${path}: ${n}`));
  return out;
}

/** The task rows that carry `should_trigger` as trigger queries (their input is the query). */
export function triggersFromTasks(tasks: readonly TaskItem[]): TriggerQuery[] {
  return tasks.flatMap((t) =>
    t.shouldTrigger === undefined ? [] : [{ id: t.id, query: t.input, shouldTrigger: t.shouldTrigger }],
  );
}

/**
 * A seeded split that keeps the mix: should-trigger and should-not-trigger queries are shuffled
 * apart and each gives `trainShare` of its queries (at least one, leaving at least one) to train,
 * so both sides of the gate see both kinds whenever there are two of a kind.
 */
export function splitTriggers(
  queries: readonly TriggerQuery[],
  trainShare: number,
  seed: number,
): TriggerSplit {
  const split: TriggerSplit = { train: [], heldOut: [] };
  for (const kind of [true, false]) {
    const group = queries.filter((q) => q.shouldTrigger === kind);
    if (group.length === 0) continue;
    new PyRandom(seed).shuffle(group);
    const n =
      group.length === 1 ? 0 : Math.min(group.length - 1, Math.max(1, Math.round(group.length * trainShare)));
    split.train.push(...group.slice(0, n));
    split.heldOut.push(...group.slice(n));
  }
  return split;
}
