/**
 * A run's gate history as the table (one row per candidate, its edits and their fates) and the
 * header's lines (the summary, the gate's power, A/A check and the target alone) read it. No DOM:
 * table.ts and main.ts only paint these values, and the unit tests check them.
 */
import {
  aaSummary,
  describeGatePower,
  describeItemRegressions,
  describeNoSkill,
  NO_SKILL_OFF,
  noSkillVerdict,
} from '../../protocol/gateText';
import {
  candidateName,
  type CandidateOrigin,
  type EditFate,
  type GateHistoryData,
  type GateStepRow,
} from '../../protocol/webview';
import { isAccepted, isSkipped } from '../../protocol/vocabulary';
import { editTerms, editTitle } from '../../protocol/words';
import {
  formatDelta,
  formatScore,
  humanLabel,
  isUndecided,
  rowKey,
  verdictKind,
  verdictLabel,
  type VerdictKind,
} from './viewModel';

export interface TableEdit {
  id: string;
  title: string;
  /** The engine's terms for the same edit (op, support_count, source_type), for the hover. */
  terms: string;
  /** Optimizer-written text: shown with textContent only. */
  content: string;
  fate: EditFate;
  fateLabel: string;
}

export interface TableRow {
  key: string;
  step: number;
  origin: CandidateOrigin;
  title: string;
  verdict: string;
  verdictKind: VerdictKind;
  human?: string;
  score: string;
  delta: string;
  deltaValue?: number;
  /** What the Δ is, and the paired test's own Δ where the paired gate decided. */
  deltaDetail?: string;
  editsSummary: string;
  edits: TableEdit[];
  canOpen: boolean;
  /** `broke 2`: items the candidate broke that the current skill passes (the per-item rule). */
  regressions?: string;
  /** The per-item rule's whole sentence, with the item ids. */
  regressionsDetail?: string;
}

const fateLabels: Record<EditFate, string> = {
  kept: 'kept',
  'rejected-by-gate': 'rejected by gate',
  'accepted-by-you': 'accepted by you',
  'rejected-by-you': 'rejected by you',
  skipped: 'not applied',
  pending: 'waiting for the gate',
};

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function fateText(e: GateStepRow['edits'][number]): string {
  const base = fateLabels[e.fate];
  if (e.fate === 'skipped' && e.status)
    return `${base} (${e.status.replace(/_/g, ' ')})${e.reason ? `: ${e.reason}` : ''}`;
  if (e.reason) return `${base}: ${e.reason}`;
  return base;
}

function editsSummary(row: GateStepRow): string {
  if (row.origin === 'slow_update') return 'rewrites the protected block';
  if (row.origin === 'meta_reflect' && row.edits.length === 0) return 'edits from the whole epoch';
  if (row.edits.length === 0) return isSkipped(row.action) ? '' : 'no edits';
  const counts = new Map<string, number>();
  for (const e of row.edits) counts.set(fateLabels[e.fate], (counts.get(fateLabels[e.fate]) ?? 0) + 1);
  const parts = [...counts].map(([label, n]) => `${n} ${label}`);
  return `${row.edits.length} edit${row.edits.length === 1 ? '' : 's'}: ${parts.join(', ')}`;
}

export function tableRows(data: GateHistoryData): TableRow[] {
  return data.steps.map((row) => {
    const delta =
      row.candidateScore !== undefined && row.previousScore !== undefined
        ? row.candidateScore - row.previousScore
        : undefined;
    const out: TableRow = {
      key: rowKey(row),
      step: row.step,
      origin: row.origin,
      title: capitalize(candidateName(row.origin, row.step, row.epoch)),
      verdict: verdictLabel(row.action),
      verdictKind: verdictKind(row.action),
      score: formatScore(row.candidateScore),
      delta: formatDelta(delta),
      editsSummary: editsSummary(row),
      edits: row.edits.map((e) => ({
        id: e.id,
        title: editTitle(e),
        terms: editTerms(e),
        content: e.content ?? e.target ?? '',
        fate: e.fate,
        fateLabel: fateText(e),
      })),
      canOpen: row.hasCandidate,
    };
    if (delta !== undefined) out.deltaValue = delta;
    const t = row.gateTest;
    if (t && delta !== undefined) {
      // The column is mean against mean; the test compares the items both skills answered, with the
      // samples it drew (more_repeats re-samples the current skill), so the two can differ.
      const paired = formatDelta(t.mean_delta);
      out.deltaDetail = `candidate's score − the current score the step started from; the paired test's Δ over the ${t.n} items both skills answered: ${paired}`;
      if (paired !== out.delta) out.delta = `${out.delta} (paired ${paired})`;
    }
    if (row.human) out.human = humanLabel(row.human);
    const broke = row.itemRegressions;
    if (broke?.items.length) {
      out.regressions = `broke ${broke.items.length}${broke.rejected ? ' (rule)' : ''}`;
      out.regressionsDetail = describeItemRegressions(broke);
    }
    return out;
  });
}

/** One line under the title: where the run stands. */
export function summaryLine(data: GateHistoryData): string {
  const rows = data.steps.filter((r) => r.origin === 'step');
  const done = rows.filter((r) => !isUndecided(r.action)).length;
  const accepted = rows.filter((r) => isAccepted(r.action)).length;
  const best = rows.reduce<number | undefined>(
    (m, r) => (r.bestScore !== undefined ? r.bestScore : m),
    data.baselineScore,
  );
  const parts = [
    data.totalSteps ? `${done} of ${data.totalSteps} steps` : `${done} step${done === 1 ? '' : 's'}`,
    `${accepted} accepted`,
    `best ${formatScore(best)}`,
  ];
  if (data.baselineScore !== undefined) parts.push(`baseline ${formatScore(data.baselineScore)}`);
  if (data.noSkill) parts.push(`no skill ${formatScore(data.noSkill.selection)}`);
  const spend =
    data.spend.dollars !== null
      ? `$${data.spend.dollars.toFixed(2)}`
      : `${data.spend.tokens.toLocaleString('en-US')} tokens`;
  parts.push(data.simulated ? `${spend} (simulated models)` : spend);
  return parts.join(' · ');
}

/**
 * The lines under the summary about the gate itself: what it can tell from noise, the newest A/A
 * check of this run's skills, and whether the skill beats the target alone (or that it was not
 * scored). The words are the CLI's and the report's.
 */
export function gateLines(data: GateHistoryData): string[] {
  const lines: string[] = [];
  if (data.gatePower) lines.push(`Gate: ${describeGatePower(data.gatePower)}.`);
  if (data.aa)
    lines.push(`${aaSummary(data.aa)} (the same skill scored against itself: every accept is noise).`);
  if (data.noSkill) {
    const best = data.steps.reduce<number | undefined>(
      (m, r) => (r.bestScore !== undefined ? r.bestScore : m),
      data.baselineScore,
    );
    lines.push(
      `No skill (the target alone): ${describeNoSkill(data.noSkill)}. ${noSkillVerdict(data.noSkill, { selection: best ?? null })}`,
    );
  } else if (data.noSkillOff) lines.push(NO_SKILL_OFF);
  return lines;
}
