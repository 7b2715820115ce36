import { SkillOptError } from '../errors';
import { protectedSpans } from '../skill/markers';
import type { GateAction } from '../../protocol/vocabulary';

export type GateMetric = 'hard' | 'soft' | 'mixed';
/** What the gate decides: the vocabulary's gate actions (`becomesBest` there says which make a new best). */
export type GateDecision = GateAction;

export interface GateScore {
  hard: number;
  soft: number;
}

export interface SemanticDensityOptions {
  enabled: boolean;
  /** Bonus per unit of density (reference default 0.05). */
  weight: number;
  /** A list, or one comma-separated string as YAML configs may give it. */
  leadingWords?: readonly string[] | string;
}

export interface ProjectOptions {
  metric: GateMetric;
  /** Weight of `soft` in `mixed`, clamped to [0, 1]; default 0.5. */
  mixedWeight?: number;
  semanticDensity?: SemanticDensityOptions;
  /** The scored skill; needed only for the semantic-density bonus. */
  skill?: string;
}

export const DEFAULT_LEADING_WORDS: readonly string[] = [
  'MUST',
  'ALWAYS',
  'NEVER',
  'ONLY',
  'CRITICAL',
  'IMPORTANT',
  'RESOLVE',
  'PREFER',
  'ENSURE',
  'STRICT',
  'VERIFY',
];

function leadingWordSet(words: readonly string[] | string | undefined): Set<string> {
  const list =
    words === undefined ? DEFAULT_LEADING_WORDS : typeof words === 'string' ? words.split(',') : words;
  return new Set(list.map((w) => w.trim().toLowerCase()).filter((w) => w.length > 0));
}

/**
 * Share of the skill's word tokens that are leading words (MUST, NEVER, …), with protected blocks
 * removed first: the reference's optional bonus for directive-dense skills. 0 for a skill with no tokens.
 */
export function semanticDensity(skill: string, leadingWords?: readonly string[] | string): number {
  let body = '';
  let cursor = 0;
  for (const span of protectedSpans(skill)) {
    body += skill.slice(cursor, span.start);
    cursor = span.end;
  }
  body += skill.slice(cursor);
  const tokens = body.toLowerCase().match(/[a-zA-Z0-9]+/g);
  if (!tokens) return 0;
  const lead = leadingWordSet(leadingWords);
  let hits = 0;
  for (const t of tokens) if (lead.has(t)) hits++;
  return hits / tokens.length;
}

/** Projects a (hard, soft) selection score onto the single number the gate compares. */
export function projectScore(score: GateScore, options: ProjectOptions): number {
  let projected: number;
  switch (options.metric) {
    case 'hard':
      projected = score.hard;
      break;
    case 'soft':
      projected = score.soft;
      break;
    case 'mixed': {
      const raw = options.mixedWeight ?? 0.5;
      const w = Number.isFinite(raw) ? Math.max(0, Math.min(1, raw)) : 0.5;
      projected = (1 - w) * score.hard + w * score.soft;
      break;
    }
    default:
      throw new SkillOptError('config', `unknown gate metric "${String(options.metric)}"`, {
        key: 'evaluation.gate_metric',
        fix: 'use hard, soft or mixed',
      });
  }
  const density = options.semanticDensity;
  if (density?.enabled && options.skill !== undefined) {
    projected += density.weight * semanticDensity(options.skill, density.leadingWords);
  }
  return projected;
}

export interface GateInput {
  candidate: number;
  current: number;
  best: number;
  /** `evaluation.use_gate`; false force-accepts every candidate. */
  useGate: boolean;
}

/**
 * The reference gate rule with strict inequalities: a tie with the current score rejects, and a new
 * best needs to beat the best strictly. NaN scores never win a comparison, so they reject.
 */
export function decideGate(input: GateInput): GateDecision {
  if (!input.useGate) return 'force_accept';
  if (input.candidate > input.current) return input.candidate > input.best ? 'accept_new_best' : 'accept';
  return 'reject';
}

export interface PairedGateInput extends GateInput {
  /** The paired test of candidate against current on the same items. */
  test: { meanDelta: number; pValue: number };
  alpha: number;
}

/**
 * The paired gate (evaluation.gate_test: paired): accept only when the per-item deltas show the
 * candidate better at level `alpha` (and its mean is higher); reject when the candidate is not
 * better on average; otherwise the difference is within noise: inconclusive.
 */
export function decidePairedGate(input: PairedGateInput): GateDecision {
  if (!input.useGate) return 'force_accept';
  if (!(input.test.meanDelta > 0)) return 'reject';
  if (input.test.pValue <= input.alpha && input.candidate > input.current)
    return input.candidate > input.best ? 'accept_new_best' : 'accept';
  return 'inconclusive';
}
