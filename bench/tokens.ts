/**
 * §3 of issue 7, first half: tokens per stage per step, and how the analyst's prompt grows with
 * the skill's length and with the length of the target's replies (trajectories). The reference
 * embeds the skill in every trajectory (9 prompt bytes per skill byte at minibatch 8); ours must
 * carry the skill once and cut replies to a bounded excerpt.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchConfig, recordTraining, type ChildServer } from './harness';
import { linearFit, median } from './stats';

export interface StageTokens {
  stage: string;
  calls: number;
  promptTokens: number;
  completionTokens: number;
}

export interface GrowthPoint {
  /** Skill characters, or target reply characters. */
  x: number;
  analystPromptChars: { mean: number; max: number; calls: number };
  mergePromptChars: number;
}

export interface TokensResult {
  /** Per step, per stage (history.json `tokens`). */
  perStep: Array<{ step: number; stages: StageTokens[] }>;
  /** Median over steps, per stage. */
  medianPerStep: StageTokens[];
  /** Mean analyst prompt characters per step (the step buffer grows within an epoch). */
  analystPromptByStep: Array<{ step: number; epoch: number; meanChars: number }>;
  skillGrowth: { points: GrowthPoint[]; bytesPerSkillByte: number; r2: number };
  trajectoryGrowth: {
    points: GrowthPoint[];
    /** Prompt growth per reply byte between the two longest replies: ~0 when bounded. */
    tailBytesPerReplyByte: number;
    bounded: boolean;
  };
}

const PAD_LINE = (i: number): string =>
  `- Background ${String(i).padStart(4, '0')}: the knowledge base serves the Acme support desk and its forms.`;

/** The bench skill padded with neutral lines to about `chars` characters. */
export function paddedSkill(base: string, chars: number): string {
  const lines: string[] = [];
  let size = base.length + '\n## Background\n\n'.length;
  for (let i = 1; size < chars; i++) {
    const l = PAD_LINE(i);
    lines.push(l);
    size += l.length + 1;
  }
  return lines.length ? `${base.trimEnd()}\n\n## Background\n\n${lines.join('\n')}\n` : base;
}

/** First step's rollout and reflection only (a crash right after reflection): enough to see prompts. */
async function analystPrompts(
  server: ChildServer,
  dir: string,
  overrides: string[],
): Promise<GrowthPoint['analystPromptChars'] & { merge: number }> {
  const run = await recordTraining({
    server,
    outDir: join(dir, 'run'),
    cacheDir: join(dir, 'cache'),
    overrides: ['train.num_epochs=1', ...overrides],
    abortWhen: (e) => e.type === 'stage/finished' && e.stage === 'aggregate',
  });
  const analyst = run.calls.filter((c) => c.kind === 'analyst' && c.promptChars !== undefined);
  const merge = run.calls.filter((c) => c.kind === 'merge' && c.promptChars !== undefined);
  const sizes = analyst.map((c) => c.promptChars!);
  return {
    mean: sizes.reduce((a, b) => a + b, 0) / Math.max(1, sizes.length),
    max: Math.max(0, ...sizes),
    calls: sizes.length,
    merge: merge.length ? Math.max(...merge.map((c) => c.promptChars!)) : 0,
  };
}

export async function runTokens(
  server: ChildServer,
  workDir: string,
  opts: { skillSizes: number[]; replySizes: number[] },
  log: (line: string) => void,
): Promise<TokensResult> {
  const run = await recordTraining({
    server,
    outDir: join(workDir, 'tokens', 'run'),
    cacheDir: join(workDir, 'tokens', 'cache'),
  });
  const perStep = run.history.map((r) => ({
    step: r.step,
    stages: Object.entries(r.tokens).map(([stage, t]) => ({
      stage,
      calls: t.calls,
      promptTokens: t.prompt_tokens,
      completionTokens: t.completion_tokens,
    })),
  }));
  const stageNames = [...new Set(perStep.flatMap((s) => s.stages.map((x) => x.stage)))];
  const medianPerStep = stageNames.map((stage) => {
    const rows = perStep.map((s) => s.stages.find((x) => x.stage === stage));
    const m = (k: 'calls' | 'promptTokens' | 'completionTokens'): number =>
      median(rows.map((r) => r?.[k] ?? 0));
    return {
      stage,
      calls: m('calls'),
      promptTokens: m('promptTokens'),
      completionTokens: m('completionTokens'),
    };
  });
  const epochOf = new Map(run.history.map((r) => [r.step, r.epoch]));
  const analystPromptByStep = [...epochOf.keys()].map((step) => {
    const sizes = run.calls
      .filter((c) => c.kind === 'analyst' && c.step === step)
      .map((c) => c.promptChars ?? 0);
    return {
      step,
      epoch: epochOf.get(step) ?? 0,
      meanChars: sizes.reduce((a, b) => a + b, 0) / Math.max(1, sizes.length),
    };
  });

  const base = readFileSync(join(benchConfig, '..', 'SKILL.md'), 'utf8');
  const skillPoints: GrowthPoint[] = [];
  for (const size of opts.skillSizes) {
    const dir = join(workDir, 'skill-growth', String(size));
    mkdirSync(dir, { recursive: true });
    const skill = paddedSkill(base, size);
    const path = join(dir, 'SKILL.md');
    writeFileSync(path, skill);
    const p = await analystPrompts(server, dir, [`env.skill_init=${path}`]);
    skillPoints.push({
      x: skill.length,
      analystPromptChars: { mean: p.mean, max: p.max, calls: p.calls },
      mergePromptChars: p.merge,
    });
    log(`  skill ${skill.length} chars → analyst prompt ${p.mean.toFixed(0)} chars (mean of ${p.calls})`);
  }
  const skillFit = linearFit(skillPoints.map((p) => [p.x, p.analystPromptChars.mean] as const));

  const replyPoints: GrowthPoint[] = [];
  try {
    for (const size of opts.replySizes) {
      await server.configure({ targetReplyChars: size });
      const p = await analystPrompts(server, join(workDir, 'reply-growth', String(size)), []);
      replyPoints.push({
        x: size,
        analystPromptChars: { mean: p.mean, max: p.max, calls: p.calls },
        mergePromptChars: p.merge,
      });
      log(`  target reply ${size} chars → analyst prompt ${p.mean.toFixed(0)} chars (mean of ${p.calls})`);
    }
  } finally {
    await server.configure({ targetReplyChars: 0 });
  }
  const [a, b] = replyPoints.slice(-2);
  const tail =
    a && b && b.x !== a.x ? (b.analystPromptChars.mean - a.analystPromptChars.mean) / (b.x - a.x) : NaN;
  return {
    perStep,
    medianPerStep,
    analystPromptByStep,
    skillGrowth: { points: skillPoints, bytesPerSkillByte: skillFit.slope, r2: skillFit.r2 },
    trajectoryGrowth: {
      points: replyPoints,
      tailBytesPerReplyByte: tail,
      bounded: Number.isFinite(tail) && tail < 0.01,
    },
  };
}
