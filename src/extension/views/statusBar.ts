/**
 * Status bar item while a run trains: step, best score and spend with a spinner; a click reveals
 * the run in the Runs view. After the run ends it shows the result for a short while.
 */
import * as vscode from 'vscode';
import { Commands, ReviewCommands } from '../constants';
import type { Ctx } from '../ctx';
import { cutOffWords } from '../../protocol/words';
import { waitingForBatch, type RunView } from '../runs/liveState';
import { bestScoreOf, formatScore, formatSpend, spendLine } from '../runs/treeNodes';

/** How long the final result stays in the status bar. */
const resultLingerMs = 15_000;

export function statusText(run: RunView): string {
  const live = run.live;
  if (!live) return `SkillOpt: ${run.name}`;
  const best = `best ${formatScore(bestScoreOf(run))}`;
  const spend = formatSpend(live.spend.dollars, live.simulated, live.spend.cutOff);
  if (live.status === 'running' && live.waiting)
    return `$(bell) SkillOpt: step ${live.waiting.step} waits for your review`;
  switch (live.status) {
    case 'running': {
      const step =
        live.totalSteps > 0
          ? `step ${Math.max(live.step, 1)}/${live.totalSteps}`
          : (live.stage ?? 'starting');
      const batch = live.batch
        ? ` · ${live.batch.evaluation} batch ${live.batch.done}/${live.batch.total}`
        : '';
      return `$(sync~spin) SkillOpt ${step}${batch} · ${best} · ${spend}`;
    }
    case 'finished':
      return `$(pass) SkillOpt finished · ${best} · ${spend}`;
    case 'stopped':
      return `$(debug-pause) SkillOpt stopped · ${best} · ${spend}`;
    default:
      return `$(warning) SkillOpt ${live.status} · ${best}`;
  }
}

/** What a screen reader says for the item: the same facts in words, no icon codes or Markdown. */
export function statusLabel(run: RunView): string {
  const live = run.live;
  if (!live) return `SkillOpt run ${run.name}`;
  const best = bestScoreOf(run);
  const facts = [
    `SkillOpt run ${run.name}${live.simulated ? ' (simulated models)' : ''}`,
    live.status === 'running' && live.waiting
      ? `paused: step ${live.waiting.step} waits for your review`
      : live.status === 'running' && live.totalSteps > 0
        ? `training step ${Math.max(live.step, 1)} of ${live.totalSteps}`
        : live.status,
    ...(best !== undefined ? [`best score ${formatScore(best)}`] : []),
    live.simulated && !live.spend.cutOff
      ? ''
      : `spend ${formatSpend(live.spend.dollars, live.simulated, live.spend.cutOff)}`,
    cutOffWords(live.spend.cutOff),
  ];
  return facts.filter(Boolean).join(', ');
}

export function registerStatusBar(ctx: Ctx): vscode.StatusBarItem {
  const item = vscode.window.createStatusBarItem('skillopt.run', vscode.StatusBarAlignment.Left, 20);
  item.name = 'SkillOpt Run';
  let shown: string | undefined;
  let lingerTimer: ReturnType<typeof setTimeout> | undefined;
  const update = (): void => {
    const active = ctx.runs.activeRuns();
    const run = active.at(-1) ?? (shown ? ctx.runs.get(shown) : undefined);
    if (!run?.live) {
      item.hide();
      return;
    }
    if (active.length > 0 && lingerTimer) {
      clearTimeout(lingerTimer);
      lingerTimer = undefined;
    }
    shown = run.dir;
    item.text = statusText(run);
    const live = run.live;
    // Run names and engine messages come from files and models: shown as text, never as Markdown.
    const tip = new vscode.MarkdownString();
    tip.appendMarkdown('**').appendText(run.name).appendMarkdown('**');
    if (live.simulated) tip.appendText(' (simulated models)');
    if (live.stage) {
      tip
        .appendMarkdown('\n\n')
        .appendText(
          `Stage: ${live.stage}${live.progress ? ` ${live.progress.done}/${live.progress.total}` : ''}`,
        );
    }
    if (live.batch) tip.appendMarkdown('\n\n').appendText(waitingForBatch(live.batch));
    tip.appendMarkdown('\n\n').appendText(spendLine(live.spend, live.simulated, true));
    if (live.message) tip.appendMarkdown('\n\n').appendText(live.message);
    if (live.status === 'running' && live.waiting)
      tip.appendMarkdown('\n\n').appendText('Click to review the candidate; the run waits until you decide.');
    else tip.appendMarkdown('\n\n').appendText('Click to show the run.');
    item.tooltip = tip;
    item.accessibilityInformation = { label: statusLabel(run), role: 'button' };
    const waiting = live.status === 'running' ? live.waiting : undefined;
    item.backgroundColor = waiting ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    item.command = waiting
      ? { command: ReviewCommands.openWaiting, title: 'Review Waiting Step', arguments: [run.dir] }
      : { command: Commands.revealRun, title: 'Show Run', arguments: [run.dir] };
    item.show();
    if (active.length === 0 && !lingerTimer) {
      lingerTimer = setTimeout(() => {
        lingerTimer = undefined;
        shown = undefined;
        update();
      }, resultLingerMs);
    }
  };
  ctx.pushExtCleanup(item, ctx.runs.onDidChange(update), {
    dispose: () => {
      if (lingerTimer) clearTimeout(lingerTimer);
    },
  });
  update();
  return item;
}
