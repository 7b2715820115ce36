import { relative } from 'node:path';
import type { EngineEvent } from '../../protocol/events';
import { prepareRun, preparedDataDigest, trainPrepared } from '../../engine/run';
import { diffStats } from '../../engine/skill/hunks';
import { readSkillArtifact } from '../../engine/skill/package/artifacts';
import { packageChanges } from '../../engine/skill/package/changes';
import { isPackageText } from '../../engine/skill/package/text';
import { packageDirOf, RUN_DIR, RUN_FILE, RunLayout } from '../../engine/store/layout';
import { dollarCapNotice } from '../../engine/dollarCap';
import { clearRunFolder } from '../../engine/store/freshStart';
import { holdsRun, refuseOutFolder } from '../../engine/train/sameRun';
import { ExitCode, UsageError } from '../exit';
import { PrettyPrinter } from '../render';
import { spendLine } from '../../engine/llm/spendText';
import { cfgOptionsFlag, type CommandSpec, configFlag, jsonFlag, verboseFlag } from '../args';
import { withBatchApi } from '../../engine/cancelBatches';
import { batchTargetOnly, cancelBatches } from './cancelBatch';
import { cliModels, commandLine, parseCommon, stderrLogger } from './common';
import { invokedAs } from '../invocation';
import { raisingCap } from '../capResume';
import { onStopSignals } from '../stopSignals';

export const trainSpec: CommandSpec = {
  name: 'train',
  usage: 'skillopt train <config> [options] [--cfg-options k=v ...] [legacy flags]',
  summary: 'train the skill: reflect on failures, edit, keep what the selection split accepts',
  flags: [
    configFlag,
    {
      name: 'out',
      type: 'string',
      value: 'DIR',
      help: 'run folder (default: env.out_root, else <config folder>/.skillopt/runs/<name>_<timestamp>)',
    },
    {
      name: 'resume',
      type: 'boolean',
      help: 'continue the run in --out (also the default when --out holds a run)',
    },
    { name: 'fresh', type: 'boolean', help: 'start over in --out, deleting the previous run there' },
    {
      name: 'force',
      type: 'boolean',
      help: 'resume under a changed config, keeping the steps done (not a change of data or batch plan)',
    },
    {
      name: 'cancel-batch',
      type: 'boolean',
      help: 'cancel the provider batches (evaluation.batch_api) the run in --out left running, and train nothing; resuming collects what they answered before the cancel and asks the rest one by one',
    },
    cfgOptionsFlag,
    jsonFlag,
    verboseFlag,
  ],
  legacy: true,
  examples: [
    'skillopt train skillopt.yaml --out runs/hs --cfg-options train.num_epochs=3',
    'skillopt train skillopt.yaml --out runs/hs --resume',
    'skillopt train skillopt.yaml --out runs/hs --cancel-batch',
  ],
};

/**
 * `skillopt train`: the full loop, headless. Ctrl-C stops at the next safe point (the current
 * model calls are cancelled, nothing accepted is lost); a second Ctrl-C exits at once.
 */
export async function runTrain(args: readonly string[]): Promise<number> {
  const a = parseCommon(args, trainSpec);
  if (a.values.resume && a.values.fresh)
    throw new UsageError(
      '--resume and --fresh exclude each other',
      'keep --resume to continue the run in --out, or --fresh to start it again',
    );
  if (a.values.force && a.values.fresh)
    throw new UsageError(
      '--force and --fresh exclude each other',
      '--fresh already starts the folder over; keep --force to go on with the steps done',
    );
  const outArg = typeof a.values.out === 'string' ? a.values.out : undefined;
  const cancelBatch = a.values['cancel-batch'] === true;
  if (cancelBatch && (a.values.fresh || !outArg))
    throw new UsageError(
      '--cancel-batch needs --out DIR (the run whose batches to cancel), without --fresh',
      'give --out with the run folder the first run printed',
    );
  if (a.values.resume && !outArg)
    throw new UsageError(
      '--resume needs --out DIR (the run folder to continue)',
      'add --out with the run folder the first run printed',
    );
  const logger = stderrLogger(a.values.verbose ? 'debug' : 'warn');
  const prepare = (): ReturnType<typeof prepareRun> =>
    prepareRun({
      configPath: a.config,
      // The batch API of the config's target, whatever mode the run used it in.
      overrides: cancelBatch ? withBatchApi(a.overrides) : a.overrides,
      legacyArgs: a.legacyArgs,
      models: cliModels,
      ...(outArg ? { outDir: outArg } : {}),
      logger,
    });
  const prepared = cancelBatch ? batchTargetOnly(prepare) : prepare();
  // Every refusal trainPrepared would make comes before anything is printed or deleted: the folder
  // (unless --fresh is about to clear its run), then a cap no price can reach.
  const clearing = a.values.fresh === true && outArg !== undefined && holdsRun(outArg);
  if (!cancelBatch && !clearing)
    refuseOutFolder(prepared.outDir, prepared.flatConfig, preparedDataDigest(prepared), {
      ...(a.values.resume ? { requireResume: true } : {}),
      ...(a.values.force ? { force: true } : {}),
    });
  if (!cancelBatch) dollarCapNotice(prepared, 'train');
  // Only once the config and data are known good, and never under a run another process is writing.
  const keptByFresh = clearing ? clearRunFolder(outArg) : [];
  // Printed and sent as an event: secrets in overrides are masked (pass them again, or use the
  // environment variable), and arguments are quoted so the line can be pasted into a shell.
  const resumeWords = [a.config, '--out', prepared.outDir, '--resume'];
  const resumeCommand = commandLine(`${invokedAs()} train`, resumeWords, a);
  if (cancelBatch) {
    try {
      // The run's own evaluations; `skillopt eval` cancels (and collects) its eval_only ones.
      return await cancelBatches(prepared, a.json, resumeCommand, RUN_DIR.evalOnly);
    } finally {
      await prepared.models.close();
    }
  }
  const printer = new PrettyPrinter(process.stdout);
  const emit = (event: EngineEvent): void => {
    // A stop on a cap resumes only with the cap raised: the line says so rather than repeat it.
    let e = event;
    if (e.type === 'run/stopped' && e.cap) {
      const { args, added } = raisingCap(a, e.cap);
      e = { ...e, resumeCommand: commandLine(`${invokedAs()} train`, resumeWords, args, added) };
    }
    if (a.json) process.stdout.write(JSON.stringify(e) + '\n');
    else printer.handle(e);
  };
  for (const w of prepared.warnings) emit({ type: 'warning', message: w });
  if (keptByFresh.length)
    emit({
      type: 'warning',
      message: `--fresh deleted the run in ${outArg} and kept ${keptByFresh.length} file(s) no run writes: ${keptByFresh.slice(0, 8).join(', ')}${keptByFresh.length > 8 ? ', …' : ''}`,
    });
  if (!a.json)
    process.stdout.write(
      // The whole run's: a resumed run asks only what it has not kept, the response cache answers some.
      `Estimated model calls for the whole run: at most ~${prepared.estimate.total} (fewer on a resume or from the response cache)\n`,
    );

  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = (): void => {
    interrupts++;
    if (interrupts > 1) process.exit(ExitCode.Interrupted);
    process.stderr.write('\nStopping at the next safe point (Ctrl-C again to quit at once)…\n');
    controller.abort();
  };
  const offStopSignals = onStopSignals(onSigint);
  try {
    const outcome = await trainPrepared(prepared, {
      emit,
      signal: controller.signal,
      resumeCommand,
      cancelBatchCommand: commandLine(
        `${invokedAs()} train`,
        [a.config, '--out', prepared.outDir, '--cancel-batch'],
        a,
      ),
      logger,
      ...(a.values.resume ? { requireResume: true } : {}),
      ...(a.values.force ? { forceConfig: true } : {}),
      // --fresh emptied a run folder and named the files of the person's it kept there.
      ...(keptByFresh.length ? { keepsOtherFiles: true } : {}),
    });
    // The run's whole spend, earlier processes included (the ledger is merged into the accounting).
    if (!a.json)
      process.stdout.write(spendLine(prepared.models.accounting.totals(), prepared.models.simulated) + '\n');
    if (outcome.status === 'stopped') {
      return controller.signal.aborted ? ExitCode.Interrupted : ExitCode.Budget;
    }
    if (!a.json) {
      const bestFile = new RunLayout(prepared.outDir).file(RUN_FILE.bestSkill);
      const best = readSkillArtifact(bestFile);
      // A skill folder: the lines changed in all its files, and the folder that holds the whole best skill.
      const isPackage = isPackageText(prepared.initialSkill);
      const bestPath = isPackage ? packageDirOf(bestFile) : bestFile;
      const changed = isPackage
        ? packageChanges(prepared.initialSkill, best)
        : [{ before: prepared.initialSkill, after: best }];
      const st = changed
        .map((c) => diffStats(c.before, c.after))
        .reduce((a, b) => ({ added: a.added + b.added, removed: a.removed + b.removed }), {
          added: 0,
          removed: 0,
        });
      const where = isPackage ? ` in ${changed.length} file${changed.length === 1 ? '' : 's'}` : '';
      process.stdout.write(
        `Diff from the initial skill: +${st.added} / -${st.removed} lines${where} (${relative(process.cwd(), prepared.skillPath) || prepared.skillPath} → ${relative(process.cwd(), bestPath)})\n`,
      );
    }
    return ExitCode.Ok;
  } finally {
    offStopSignals();
    await prepared.models.close();
  }
}
