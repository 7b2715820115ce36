/**
 * The activation track in summary.json and report.md: the held-out trigger rate of the initial
 * and the final description, and one row per epoch's gate.
 */
import { describeActivation, rateText } from '../../protocol/activationText';
import type { ActivationRecord } from '../../protocol/records';
import { isAccepted } from '../../protocol/vocabulary';
import type { ActivationPlan } from './plan';

export interface ActivationSummary {
  source: string;
  mode: 'agent' | 'chat';
  train_queries: number;
  held_out_queries: number;
  /** Which queries the optimizer saw and which decided the gate. */
  train_ids: string[];
  held_out_ids: string[];
  repeats: number;
  initial_description: string;
  final_description: string;
  /** Held-out trigger rate of the initial description, and of the one the skill ends with. */
  held_out_before: number | null;
  held_out_after: number | null;
  accepted: number;
  rounds: number;
  records: ActivationRecord[];
}

export function activationSummary(
  plan: ActivationPlan,
  records: readonly ActivationRecord[],
): ActivationSummary | undefined {
  const first = records[0];
  const last = records.at(-1);
  if (!first || !last) return undefined;
  const after = isAccepted(last.action) ? last.held_out_candidate : last.held_out_before;
  return {
    source: plan.source,
    mode: plan.mode,
    train_queries: plan.split.train.length,
    held_out_queries: plan.split.heldOut.length,
    train_ids: plan.split.train.map((q) => q.id),
    held_out_ids: plan.split.heldOut.map((q) => q.id),
    repeats: plan.repeats,
    initial_description: first.description_before,
    final_description: last.description_after,
    held_out_before: first.held_out_before.rate,
    held_out_after: after?.rate ?? null,
    accepted: records.filter((r) => isAccepted(r.action)).length,
    rounds: records.length,
    records: [...records],
  };
}

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function activationReportLines(a: ActivationSummary | undefined): string[] {
  if (!a) return [];
  const rate = (n: number | null): string => (n === null ? 'n/a' : n.toFixed(3));
  return [
    '## Activation track',
    '',
    `The description, trained on ${a.train_queries} trigger queries and gated on ${a.held_out_queries} held-out ones (${a.repeats} runs each, ${a.mode === 'agent' ? "the agent's own skill discovery" : 'the host-style skill listing'}; from ${a.source}).`,
    '',
    `Held-out trigger rate: **${rate(a.held_out_before)} → ${rate(a.held_out_after)}** (initial → final description); ${a.accepted} of ${a.rounds} epochs kept a new description.`,
    '',
    '| epoch | verdict | train before → candidate | held-out before → candidate |',
    '|---|---|---|---|',
    ...a.records.map(
      (r) =>
        `| ${r.epoch} | ${r.action} | ${rateText(r.train_before)} → ${rateText(r.train_candidate)} | ${rateText(r.held_out_before)} → ${rateText(r.held_out_candidate)} |`,
    ),
    '',
    `Initial description: ${cell(a.initial_description)}`,
    '',
    `Final description: ${cell(a.final_description)}`,
    '',
    ...a.records.map((r) => `- ${cell(describeActivation(r))}`),
    '',
  ];
}
