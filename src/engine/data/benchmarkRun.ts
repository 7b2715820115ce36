/** What a run does with a reference benchmark once its splits are loaded: choice order, images, notices. */
import type { SkillOptConfig } from '../config/schema';
import { idleKeysLine, keysSet } from '../config/idleKeys';
import { BENCHMARK_ENV_KEYS, envFields } from '../config/schema/envFields';
import { SkillOptError } from '../errors';
import type { ModelClient } from '../llm/types';
import type { ScorerSpec } from '../scoring/scorers';
import { ANTHROPIC_MAX_IMAGE_BYTES, largestImage, mb } from './images';
import type { Benchmark } from './benchmarks';
import { withShuffledChoices } from './choiceShuffle';
import { SealedSplit, type LoadedSplits } from './splits';
import type { TaskItem } from './tasks';

/** OpenAI's `detail` for every task image (the reference's env.image_detail, typed by the schema; `auto` = the server's default). */
export function withImageDetail(
  splits: LoadedSplits,
  detail: SkillOptConfig['env']['image_detail'],
): LoadedSplits {
  if (detail === undefined || detail === 'auto') return splits;
  const set = (items: readonly TaskItem[]): TaskItem[] =>
    items.map((i) => (i.images?.length ? { ...i, imageDetail: detail } : i));
  return {
    ...splits,
    train: set(splits.train),
    val: set(splits.val),
    test: new SealedSplit(set(splits.test.unsealForEvaluation())),
  };
}

/**
 * Tasks that show images need a target that sends them: refused before anything is spent when the
 * target cannot (agents, vscode-lm, command, sim), or when an image is over the provider's limit.
 */
export function checkImageTarget(items: readonly TaskItem[], target: ModelClient, detail: unknown): string[] {
  const shown = items.filter((i) => i.images?.length);
  if (shown.length === 0)
    return typeof detail === 'string' && detail !== '' && detail !== 'auto'
      ? [
          `env.image_detail ${detail}: no task shows an image (image_path, image_paths, images or image), so it has no effect on this run`,
        ]
      : [];
  const first = shown[0];
  if (!target.acceptsImages) {
    throw new SkillOptError(
      'config',
      `${shown.length} task(s) show an image (task "${first.id}": ${first.images![0]}), but the ${target.backend} target takes text only and would answer without seeing it`,
      {
        key: 'model.target_backend',
        fix: 'use a vision-capable model through openai, azure_openai or anthropic (an OpenAI-compatible server such as vLLM serving a vision model works too)',
      },
    );
  }
  const notices = [
    `${shown.length} task(s) send their image(s) to the ${target.backend} target ${target.model} (image tokens are not in the cost estimate)`,
  ];
  if (target.backend === 'anthropic') {
    const big = largestImage(shown.flatMap((i) => i.images!));
    if (big && big.bytes > ANTHROPIC_MAX_IMAGE_BYTES) {
      throw new SkillOptError(
        'tasks',
        `image ${big.path} is ${mb(big.bytes)}, over the ${mb(ANTHROPIC_MAX_IMAGE_BYTES)} the Anthropic API takes per image`,
        { fix: 'scale the image down or save it as JPEG' },
      );
    }
    if (typeof detail === 'string' && detail !== '' && detail !== 'auto') {
      notices.push(
        `env.image_detail ${detail} applies to OpenAI targets only; Anthropic has no such setting`,
      );
    }
  }
  return notices;
}

/**
 * LiveMathematicianBench draws each item's choice order per seed: evaluation splits once with
 * `train.seed` (as the reference's eval batches), train items per batch seed when batches are cut
 * (plan.ts), so train items are only marked here.
 */
export function withBenchmarkChoices(
  splits: LoadedSplits,
  bench: Benchmark | undefined,
  seed: number,
): LoadedSplits {
  if (!bench?.shuffleChoices) return splits;
  const mark = (items: readonly LoadedSplits['train'][number][]): LoadedSplits['train'] =>
    items.map((i) => (i.choices?.length ? { ...i, shuffleChoices: true } : i));
  return {
    ...splits,
    train: mark(splits.train),
    val: mark(splits.val).map((i) => withShuffledChoices(i, seed)),
    test: new SealedSplit(mark(splits.test.unsealForEvaluation()).map((i) => withShuffledChoices(i, seed))),
  };
}

/**
 * Benchmark keys set for a run that does not read them (OfficeQA's tools on SearchQA, LiveMath's
 * choice options on a plain task file): one line per benchmark, never silently dropped.
 */
export function idleBenchmarkKeyNotices(env: SkillOptConfig['env'], benchmark: string | undefined): string[] {
  const lines: string[] = [];
  for (const [name, keys] of Object.entries(BENCHMARK_ENV_KEYS)) {
    if (name === benchmark) continue;
    const set = keysSet(env, envFields, keys);
    if (set.length === 0) continue;
    lines.push(
      idleKeysLine(
        set.map((k) => `env.${k}`),
        `the ${name} benchmark`,
        `env.name: ${name}`,
      ),
    );
  }
  return lines;
}

/** One line per way the benchmark is read or scored, for validate and the run's start. */
export function benchmarkNotices(
  bench: Benchmark | undefined,
  used: ScorerSpec,
  configured: ScorerSpec,
): string[] {
  if (!bench) return [];
  const name = (s: ScorerSpec): string => (typeof s === 'string' ? s : s.type);
  const lines = [...bench.notices];
  lines.push(
    used === configured && name(configured) !== name(bench.scorer)
      ? `${bench.name}: scored with env.scorer ${name(configured)}, not the reference's ${name(bench.scorer)}`
      : `${bench.name}: scored with ${name(used)}, as the reference's evaluator scores it (env.scorer changes it)`,
  );
  if (bench.shuffleChoices)
    lines.push(
      `${bench.name}: choice order drawn per item and seed, as the reference does (env.shuffle_choices: false keeps it)`,
    );
  const dropped = bench.dropped();
  if (dropped > 0) {
    lines.push(
      `${bench.name}: ${dropped} record(s) without a question, choices or correct label skipped, as the reference's loader does`,
    );
  }
  return lines;
}
