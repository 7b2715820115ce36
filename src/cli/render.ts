import type { EngineEvent } from '../protocol/events';
import { existsSync } from 'node:fs';
import { packageDirOf } from '../engine/store/layout';
import { capAdvice } from './capResume';
import { describeActivation } from '../protocol/activationText';
import {
  describeGatePower,
  GATE_OFF_TEXT,
  describeGateTest,
  describeItemRegressions,
  describeNoSkill,
  NO_SKILL_OFF,
  noSkillVerdict,
  testCheckLines,
} from '../protocol/gateText';
import { isAccepted, isInconclusive, isSkipped } from '../protocol/vocabulary';
import { actionLabel, originLabel } from '../protocol/words';

/** Terminal output for people: one progress line that redraws on a TTY, one line per step verdict. */
export class PrettyPrinter {
  private progressShown = false;
  private readonly batchesSeen = new Set<string>();
  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly color = out.isTTY === true,
  ) {}

  private paint(code: number, text: string): string {
    return this.color ? `\u001b[${code}m${text}\u001b[0m` : text;
  }

  private line(text: string): void {
    if (this.progressShown && this.out.isTTY) this.out.write('\r\u001b[2K');
    this.progressShown = false;
    this.out.write(text + '\n');
  }

  private progress(text: string): void {
    if (!this.out.isTTY) return;
    this.out.write('\r\u001b[2K' + text);
    this.progressShown = true;
  }

  handle(e: EngineEvent): void {
    switch (e.type) {
      case 'run/started':
        if (e.simulated)
          this.line(
            this.paint(
              33,
              'SIMULATED MODELS: the sim backend stands in for the optimizer and/or target (offline demo).',
            ),
          );
        this.line(
          `${resumeWords(e.resumedFromStep, e.totalSteps)}: ${e.epochs} epoch(s) × ${e.stepsPerEpoch} step(s); train ${e.splitSizes.train}, selection ${e.splitSizes.val}, test ${e.splitSizes.test} items`,
        );
        this.line(`  optimizer ${e.optimizer}, target ${e.target}`);
        if (e.gatePower) this.line(`  gate ${describeGatePower(e.gatePower)}`);
        else if (e.gateOff) this.line(`  gate ${GATE_OFF_TEXT}`);
        this.line(`  run folder ${e.outDir}`);
        break;
      case 'baseline/scored':
        this.line(
          `Baseline selection score ${e.score.toFixed(4)} (hard ${e.hard.toFixed(3)}, soft ${e.soft.toFixed(3)})`,
        );
        break;
      case 'rollout/progress': {
        const width = 24;
        const filled = Math.round((e.done / Math.max(1, e.total)) * width);
        const label = e.step > 0 ? `step ${e.step} ${e.stage}` : e.stage;
        this.progress(
          `  ${label.padEnd(22)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${e.done}/${e.total}  pass ${(e.hard * 100).toFixed(0)}%`,
        );
        break;
      }
      case 'batch/progress': {
        const where = `${e.evaluation} batch ${e.batchId} (${e.provider})`;
        const counts = `${e.done}/${e.total} answered${e.failed ? `, ${e.failed} failed` : ''}`;
        if (!this.batchesSeen.has(e.batchId)) {
          this.batchesSeen.add(e.batchId);
          this.line(
            `  ${e.resumed ? 'Collecting' : 'Submitted'} ${where}: half price, answered within 24 h. Ctrl-C leaves it running; running the command again collects it.`,
          );
        }
        if (e.state === 'running') this.progress(`  ${where}: ${e.detail}, ${counts}`);
        else this.line(`  ${where} ${e.state === 'ended' ? 'ended' : `failed (${e.detail})`}: ${counts}`);
        break;
      }
      case 'stage/started':
        if (e.stage !== 'rollout' && e.stage !== 'evaluate' && e.stage !== 'baseline')
          this.progress(`  step ${e.step} ${e.stage}…`);
        break;
      case 'gate/verdict': {
        const ok = isAccepted(e.action);
        const verdict = this.paint(ok ? 32 : isInconclusive(e.action) ? 33 : 31, e.action.toUpperCase());
        const where =
          e.origin === 'step'
            ? `Step ${e.step}`
            : e.origin === 'slow_update'
              ? `Epoch ${e.epoch} slow update`
              : 'Final check';
        this.line(
          `${where}: ${verdict}  candidate ${e.candidateScore.toFixed(4)}  current ${e.currentScore.toFixed(4)}  best ${e.bestScore.toFixed(4)}${e.cacheHit ? '  (cached)' : ''}`,
        );
        if (e.gateTest) this.line(`  paired gate: ${describeGateTest(e.gateTest)}`);
        if (e.itemRegressions?.items.length) this.line(`  ${describeItemRegressions(e.itemRegressions)}`);
        break;
      }
      case 'step/finished': {
        const r = e.record;
        if (isSkipped(r.action))
          this.line(`Step ${r.step}: ${actionLabel(r.action)} (train ${r.rollout_hard.toFixed(3)})`);
        else
          this.line(
            this.paint(
              2,
              `  train ${r.rollout_hard.toFixed(3)}, ${r.n_patches} patches → ${r.n_edits_merged ?? 0} merged → ${r.n_edits_ranked ?? 0} applied (budget ${r.edit_budget ?? '-'}), ${r.wall_time_s}s`,
            ),
          );
        if (r.rollout_errored || r.selection_errored)
          this.line(
            this.paint(
              33,
              `  target could not answer: ${r.rollout_errored ?? 0} train, ${r.selection_errored ?? 0} selection item(s) (kept out of the scores; see results.jsonl)`,
            ),
          );
        break;
      }
      case 'appendix/updated':
        this.line(
          `  appendix: +${e.added} execution note(s), ${e.total} in all${e.consolidated !== undefined ? ' (consolidated)' : ''}`,
        );
        break;
      case 'epoch/finished':
        this.line(
          `Epoch ${e.epoch} done${e.slowUpdate ? `; current skill from ${originLabel(e.slowUpdate)}` : ''}${e.metaSkill ? `; meta skill ${actionLabel(e.metaSkill)}` : ''}`,
        );
        break;
      case 'activation/verdict':
        this.line(`  ${describeActivation(e.record)}`);
        break;
      case 'fallback':
        this.line(this.paint(33, `  fallback in ${e.stage}: ${e.reason}`));
        break;
      case 'warning':
        this.line(this.paint(33, `warning: ${e.message}`));
        break;
      case 'run/finished':
        this.line(
          `Finished. Best selection score ${e.bestScore.toFixed(4)} at step ${e.bestStep} (baseline ${e.baselineScore.toFixed(4)}).${e.stoppedEarly ? ` Stopped early: ${e.stoppedEarly}.` : ''}`,
        );
        if (e.test)
          this.line(
            `Test split: initial ${fmt(e.test.baseline)}, best ${fmt(e.test.best)}, final ${fmt(e.test.final)}`,
          );
        if (e.testCheck) for (const l of testCheckLines(e.testCheck, false)) this.line(l);
        if (e.noSkill)
          this.line(
            `No skill (the target alone): ${describeNoSkill(e.noSkill)}. ${noSkillVerdict(e.noSkill, { selection: e.bestScore, ...(e.test?.best !== undefined ? { test: e.test.best } : {}) })}`,
          );
        else if (e.noSkillOff) this.line(NO_SKILL_OFF);
        this.line(`Best skill: ${bestSkillText(e.bestSkillPath)}`);
        if (e.reportPath) this.line(`Report: ${e.reportPath}`);
        break;
      case 'run/stopped':
        this.line(
          this.paint(
            33,
            `Stopped: ${e.reason}. Nothing accepted is lost.${e.cap ? ` ${capAdvice(e.cap)}.` : ''} Resume with:\n  ${e.resumeCommand}`,
          ),
        );
        break;
      // run/failed: the error itself reaches main, which prints it once with its fix.
      default:
        break;
    }
  }
}

function fmt(n: number | undefined): string {
  return n === undefined ? '-' : n.toFixed(4);
}

/** The best skill's path; for a skill folder run, the folder beside best_skill.md that holds it whole. */
function bestSkillText(path: string): string {
  const folder = packageDirOf(path);
  return existsSync(folder) ? `${folder} (its SKILL.md also in ${path})` : path;
}

/** A run resumed past its last step (a finished one, or one stopped at its end) has no "step 13 of 12". */
function resumeWords(from: number | undefined, total: number): string {
  if (!from) return 'Training';
  return from > total
    ? `Resuming after the last step (${total}), at the end-of-run stages`
    : `Resuming at step ${from}`;
}
