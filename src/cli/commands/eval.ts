import { existsSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import type { EngineEvent } from '../../protocol/events';
import { SkillOptError } from '../../engine/errors';
import { defaultEvalFolder, evalIdentity } from '../../engine/evalIdentity';
import { evalItemsOf, evalPrepared } from '../../engine/evalRun';
import { spendLine } from '../../engine/llm/spendText';
import { aaText } from '../../engine/optimizer/aaCheck';
import { loadConfig } from '../../engine/config/load';
import { prepareRun } from '../../engine/run';
import { EVAL_FILE, RUN_DIR, RUN_FILE, RunLayout } from '../../engine/store/layout';
import { checkSkillMarkers } from '../../engine/skill/markers';
import { readSkillToScore } from '../../engine/skill/package/artifacts';
import { readSkillText } from '../../engine/skill/skillFile';
import { skillBody } from '../../engine/skill/package/text';
import { ExitCode, UsageError } from '../exit';
import { PrettyPrinter } from '../render';
import { cfgOptionsFlag, type CommandSpec, configFlag, jsonFlag, verboseFlag } from '../args';
import { withBatchApi } from '../../engine/cancelBatches';
import { batchTargetOnly, cancelBatches } from './cancelBatch';
import { cliModels, commandLine, parseCommon, readInputFile, stderrLogger } from './common';
import { invokedAs } from '../invocation';
import { onStopSignals } from '../stopSignals';

const splits = ['train', 'val', 'test', 'all', 'valid_seen', 'valid_unseen', 'selection'] as const;

export const evalSpec: CommandSpec = {
  name: 'eval',
  usage: 'skillopt eval <config> --skill FILE [options] [--cfg-options k=v ...] [legacy flags]',
  summary: 'score a skill on one split with the target only (no optimizer calls); writes eval_summary.json',
  flags: [
    configFlag,
    {
      name: 'skill',
      type: 'string',
      value: 'FILE',
      help: 'the skill to score: a SKILL.md or a skill folder (required)',
    },
    {
      name: 'split',
      type: 'string',
      value: 'NAME',
      help: `one of ${splits.join(', ')} (default test); valid_seen and selection score the val split, valid_unseen the test split`,
    },
    {
      name: 'out',
      type: 'string',
      value: 'DIR',
      help: 'where results go (default: <run>/eval_only/<skill>_<split> when --skill is in a run folder, or <skill>_<split>_2, _3, … beside it when that one holds the evaluation of another version of the skill; else env.out_root)',
    },
    {
      name: 'batch',
      type: 'boolean',
      help: 'send the target calls as one provider batch (OpenAI Batch, Anthropic Message Batches): half price, answered within 24 h; Ctrl-C leaves the batch running and the printed command collects it',
    },
    {
      name: 'cancel-batch',
      type: 'boolean',
      help: 'cancel the provider batch this evaluation (same --out) left running, and evaluate nothing; running the evaluation again collects what it answered before the cancel and asks the rest one by one',
    },
    {
      name: 'aa',
      type: 'string',
      value: 'N',
      help: 'A/A check: score the skill N times (N ≥ 2) and report how often the strict and the paired gate would accept it over itself (the noise of your target and scorer)',
    },
    cfgOptionsFlag,
    jsonFlag,
    verboseFlag,
  ],
  legacy: true,
  examples: [
    'skillopt eval skillopt.yaml --skill runs/hs/best_skill.md --split test',
    'skillopt eval skillopt.yaml --skill runs/hs/best_skill.md --batch',
    'skillopt eval skillopt.yaml --skill runs/hs/best_skill.md --out runs/hs-eval --cancel-batch',
    'skillopt eval skillopt.yaml --skill SKILL.md --split selection --aa 4',
  ],
};

/** Said when --split is left out, for the reference's users (its default is all). */
export const DEFAULT_SPLIT_NOTICE =
  "no --split given: scoring the test split (the reference SkillOpt's eval_only.py scores all splits by default; pass --split all for that)";

/** `skillopt eval`: score a skill on a split with the target only; writes eval_summary.json. */
export async function runEval(args: readonly string[]): Promise<number> {
  const a = parseCommon(args, evalSpec);
  const skillPath = typeof a.values.skill === 'string' ? a.values.skill : undefined;
  if (!skillPath)
    throw new UsageError('eval needs --skill FILE', 'add --skill with the SKILL.md to evaluate');
  const split = typeof a.values.split === 'string' ? a.values.split : 'test';
  if (!(splits as readonly string[]).includes(split))
    throw new UsageError(`--split must be one of ${splits.join(', ')}`, 'pass one of those after --split');
  const aaRaw = typeof a.values.aa === 'string' ? a.values.aa : undefined;
  const aa = aaRaw === undefined ? undefined : Number(aaRaw);
  if (aa !== undefined && !(Number.isInteger(aa) && aa >= 2 && aa <= 20))
    throw new UsageError(
      `--aa must be a whole number from 2 to 20 (got ${aaRaw})`,
      'e.g. --aa 4 scores the skill 4 times',
    );
  // A skill folder, or a run's skill file with its package folder beside it, is scored whole.
  // The skill is checked as env.skill_init is (a binary, non-UTF-8 or over-large file is refused
  // before any call), under the config's env.max_skill_bytes.
  const maxSkillBytes = loadConfig(a.config, { overrides: a.overrides, legacyArgs: a.legacyArgs }).config.env
    .max_skill_bytes;
  const skill = readSkillToScore(skillPath, (p) => {
    readInputFile(p, 'skill file', '--skill');
    return readSkillText(p, maxSkillBytes, '--skill');
  });
  checkSkillMarkers(skillBody(skill), skillPath);
  const logger = stderrLogger(a.values.verbose ? 'debug' : 'warn');
  // --batch is evaluation.batch_api for this evaluation (refused before any call for a target without one).
  const cancelBatch = a.values['cancel-batch'] === true;
  const batch = a.values.batch === true || cancelBatch;
  let outDir = evalOutDir(a, skillPath, split);
  const prepare = (): ReturnType<typeof prepareRun> =>
    prepareRun({
      configPath: a.config,
      overrides: batch ? withBatchApi(a.overrides) : a.overrides,
      legacyArgs: a.legacyArgs,
      models: cliModels,
      ...(outDir ? { outDir } : {}),
      logger,
    });
  let prepared = cancelBatch ? batchTargetOnly(prepare) : prepare();
  // The run's default eval_only folder may hold the evaluation of an earlier version of the skill
  // file (trained further since): this one then goes beside it, and a stopped one is found again.
  if (outDir && typeof a.values.out !== 'string') {
    const id = evalIdentity(prepared, {
      skill,
      skillPath: resolve(skillPath),
      split,
      ...(aa ? { aa } : {}),
      items: evalItemsOf(prepared, split as (typeof splits)[number]),
    });
    const base = outDir;
    outDir = defaultEvalFolder(base, id);
    if (outDir !== base) {
      await prepared.models.close();
      prepared = cancelBatch ? batchTargetOnly(prepare) : prepare();
      if (!a.json)
        process.stderr.write(
          `note: ${base} holds the evaluation of another version of ${basename(skillPath)} (or other settings); this one is in ${outDir}\n`,
        );
    }
  }
  const again = (): string =>
    commandLine(
      `${invokedAs()} eval`,
      [
        a.config,
        '--skill',
        skillPath,
        '--split',
        split,
        '--out',
        prepared.outDir,
        ...(batch ? ['--batch'] : []),
        ...(aa ? ['--aa', String(aa)] : []),
      ],
      a,
    );
  const printer = new PrettyPrinter(process.stdout);
  // The config's notices (a mapped or ignored key, the backend a --backend picked, the scorer):
  // as train shows them, never dropped unsaid; with --json they are the summary's `warnings`.
  // The reference's eval_only.py scores every split when --split is left out; here the sealed test split.
  if (typeof a.values.split !== 'string' && !cancelBatch) prepared.warnings.push(DEFAULT_SPLIT_NOTICE);
  if (!a.json) for (const w of prepared.warnings) printer.handle({ type: 'warning', message: w });
  if (cancelBatch) {
    try {
      return await cancelBatches(prepared, a.json, again());
    } finally {
      await prepared.models.close();
    }
  }
  const emit = (e: EngineEvent): void => {
    if (!a.json) printer.handle(e);
    // With --json a warning the evaluation says (the dollar cap's) joins the summary's `warnings`.
    else if (e.type === 'warning') prepared.warnings.push(e.message);
  };
  const controller = new AbortController();
  const onSigint = (): void => controller.abort();
  const offStopSignals = onStopSignals(onSigint);
  try {
    const summary = await evalPrepared(prepared, {
      skill,
      skillPath: resolve(skillPath),
      split: split as (typeof splits)[number],
      ...(aa ? { aa } : {}),
      emit,
      signal: controller.signal,
    });
    if (a.json) {
      const { warnings } = prepared;
      process.stdout.write(JSON.stringify(warnings.length ? { ...summary, warnings } : summary) + '\n');
    } else {
      process.stdout.write(
        `\n${summary.split}: hard ${summary.hard.toFixed(4)}, soft ${summary.soft.toFixed(4)} over ${summary.n_items - (summary.errored?.length ?? 0)} answered items (target only; no optimizer calls)\n`,
      );
      for (const [type, s] of Object.entries(summary.by_type)) {
        process.stdout.write(`  ${type.padEnd(16)} ${s.hard.toFixed(3)} (${s.total})\n`);
      }
      if (summary.failing.length)
        process.stdout.write(
          `Failing: ${summary.failing.slice(0, 20).join(', ')}${summary.failing.length > 20 ? ', …' : ''}\n`,
        );
      if (summary.errored?.length)
        process.stdout.write(
          `Not answered by the target (not scored): ${summary.errored.length} item(s), e.g. ${summary.errored.slice(0, 5).join(', ')}; see results.jsonl\n`,
        );
      if (summary.aa) for (const line of aaText(summary.aa)) process.stdout.write(`${line}\n`);
      // The evaluation's whole spend, earlier (stopped) processes included: it has its own ledger.
      process.stdout.write(spendLine(prepared.models.accounting.totals(), prepared.models.simulated) + '\n');
      process.stdout.write(`Written: ${new RunLayout(summary.out_dir).file(EVAL_FILE.summary)}\n`);
    }
    return controller.signal.aborted ? ExitCode.Interrupted : ExitCode.Ok;
  } catch (err) {
    const capped = SkillOptError.is(err, 'budget');
    if (!(capped || SkillOptError.is(err, 'cancelled')) || a.json) throw err;
    const left = err.place.fix ? `; ${err.place.fix}` : '';
    process.stdout.write(
      `\nStopped: ${err.problem}${left}. Answered items are kept; continue with:\n  ${again()}\n`,
    );
    return capped ? ExitCode.Budget : ExitCode.Interrupted;
  } finally {
    offStopSignals();
    await prepared.models.close();
  }
}

/** The run folder a skill file lies in (`<run>/best_skill.md`, `<run>/skills/skill_v0003.md`). */
function runFolderOf(skillPath: string): string | undefined {
  const dir = dirname(resolve(skillPath));
  return [dir, dirname(dir)].find((d) => existsSync(new RunLayout(d).file(RUN_FILE.state)));
}

/**
 * Where eval writes: --out, else under the run folder the skill comes from, else env.out_root; never
 * a new folder beside the config on every call.
 */
function evalOutDir(a: ReturnType<typeof parseCommon>, skillPath: string, split: string): string | undefined {
  if (typeof a.values.out === 'string') return a.values.out;
  const run = runFolderOf(skillPath);
  if (run) return join(run, RUN_DIR.evalOnly, `${basename(skillPath, extname(skillPath))}_${split}`);
  const { config } = loadConfig(a.config, { overrides: a.overrides, legacyArgs: a.legacyArgs });
  if (config.env.out_root) return undefined;
  throw new UsageError(
    'eval needs a place for its results',
    'give --out DIR, or a --skill inside a run folder (results go to <run>/eval_only/), or set env.out_root',
  );
}
