/**
 * "Evaluate Skill…": score any skill file on one split without training. The target model comes
 * from the config, or the person picks a VS Code chat model instead. Results: overall and per task
 * type, with the failing tasks' conversations one click away.
 */
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { readJsonl } from '../../engine/store/jsonl';
import { RESULT_ROWS } from '../../engine/store/runRows';
import { EVAL_FILE, RUN_FILE, RunLayout } from '../../engine/store/layout';
import { conversationPaths } from '../../engine/store/predictionNames';
import { EngineRequests, type EvalParams, type EvalResult } from '../../protocol/engine';
import { aaSummary, aaText } from '../../protocol/gateText';
import type { RolloutRow } from '../../protocol/records';
import { scoreWords } from '../../protocol/words';
import { configFileName } from '../constants';
import type { Ctx } from '../ctx';
import { ensureLmAccess } from '../lm/lmBridge';
import { describeBatch } from '../runs/liveState';
import { formatScore } from '../runs/treeNodes';
import { failingTaskItem } from '../runs/conversationText';
import { EVALS_DIR, readEvaluation } from '../runs/evalNodes';
import { showConversation } from '../views/conversationView';
import { selectorFor } from './copilot';
import { cancelEarlierBatch, continueOrNew, followBatch, unfinishedEvaluation } from './evalBatch';
import { collectKeys } from './keys';
import { requireTrust, showEngineError, withProgress, isMarkdownFile } from './shared';

export type EvalSplit = EvalParams['split'];

export interface EvaluateOptions {
  skillPath?: string;
  configPath?: string;
  split?: EvalSplit;
  /** A vscode-lm selector for the target; absent = the config's target model. */
  lmModel?: string;
  /** The A/A check: score the skill this many times (SkillOpt: Check Gate Noise). */
  aa?: number;
  /** Where the results go; absent = `.skillopt/evals/<skill>_<split>_<time>/` beside the config. */
  outDir?: string;
  /** Config overrides (`key=value`), after the model choice's. */
  overrides?: string[];
}

const splits: ReadonlyArray<{ id: EvalSplit; detail: string }> = [
  { id: 'test', detail: 'Held-out tasks never seen in training' },
  { id: 'val', detail: 'Selection tasks (what the gate scores)' },
  { id: 'train', detail: 'Training tasks' },
  { id: 'all', detail: 'Every task' },
];

function timestamp(): string {
  return new Date().toISOString().replace(/[-:]/g, '').replace('T', '_').replace(/\..*$/, '');
}

async function pickSkill(ctx: Ctx): Promise<string | undefined> {
  type Item = vscode.QuickPickItem & { path: string };
  const items: Item[] = [];
  const active = vscode.window.activeTextEditor?.document;
  if (active && isMarkdownFile(active.uri)) {
    items.push({ label: basename(active.uri.fsPath), description: 'active editor', path: active.uri.fsPath });
  }
  for (const run of ctx.runs.list()) {
    const best = new RunLayout(run.dir).file(RUN_FILE.bestSkill);
    if (existsSync(best))
      items.push({ label: RUN_FILE.bestSkill, description: `run ${run.name}`, path: best });
  }
  const files = await vscode.workspace.findFiles('**/*.md', '**/{node_modules,.skillopt,.git}/**', 200);
  for (const f of files) {
    if (items.some((i) => i.path === f.fsPath)) continue;
    items.push({
      label: basename(f.fsPath),
      description: vscode.workspace.asRelativePath(dirname(f.fsPath)),
      path: f.fsPath,
    });
  }
  const pick = await vscode.window.showQuickPick(items, {
    title: 'SkillOpt: Evaluate Skill (1/3)',
    placeHolder: 'Skill file to score',
  });
  return pick?.path;
}

async function pickConfig(ctx: Ctx, skillPath: string): Promise<string | undefined> {
  const beside = join(dirname(skillPath), configFileName);
  if (existsSync(beside)) return beside;
  const run = ctx.runs.list().find((r) => skillPath.startsWith(r.dir));
  const origin = run ? ctx.runs.origin(run.dir) : undefined;
  if (origin && existsSync(origin.configPath)) return origin.configPath;
  const configs = await vscode.workspace.findFiles('**/skillopt*.{yaml,yml}', '**/node_modules/**', 50);
  if (configs.length === 0) {
    void vscode.window.showErrorMessage(
      'SkillOpt: evaluating needs a skillopt.yaml that names the tasks and the scorer. Run "SkillOpt: Optimize This Skill" on a skill to create one.',
    );
    return undefined;
  }
  if (configs.length === 1) return configs[0]?.fsPath;
  const pick = await vscode.window.showQuickPick(
    configs.map((c) => ({ label: vscode.workspace.asRelativePath(c), path: c.fsPath })),
    { placeHolder: 'Config with the tasks and the scorer' },
  );
  return pick?.path;
}

async function pickSplitAndModel(): Promise<{ split: EvalSplit; lmModel?: string } | undefined> {
  const split = await vscode.window.showQuickPick(
    splits.map((s) => ({ label: s.id, detail: s.detail })),
    { title: 'SkillOpt: Evaluate Skill (2/3)', placeHolder: 'Which tasks' },
  );
  if (!split) return undefined;
  type Item = vscode.QuickPickItem & { selector?: string };
  const models = await vscode.lm.selectChatModels();
  const items: Item[] = [
    { label: 'Target model from the config', description: 'as training uses it' },
    ...models.map((m) => ({
      label: m.name,
      description: `VS Code model · ${m.vendor}/${m.family}`,
      selector: selectorFor(m),
    })),
  ];
  const model = await vscode.window.showQuickPick(items, {
    title: 'SkillOpt: Evaluate Skill (3/3)',
    placeHolder: 'Which model answers',
  });
  if (!model) return undefined;
  return { split: split.label, ...(model.selector ? { lmModel: model.selector } : {}) };
}

/** Returns the scores, or undefined when cancelled or refused. */
export async function evaluateSkill(ctx: Ctx, arg?: unknown): Promise<EvalResult | undefined> {
  if (!requireTrust('evaluate a skill')) return undefined;
  const opts: EvaluateOptions =
    typeof arg === 'object' && arg !== null && !(arg instanceof vscode.Uri) ? arg : {};
  const skillPath = opts.skillPath ?? (arg instanceof vscode.Uri ? arg.fsPath : await pickSkill(ctx));
  if (!skillPath) return undefined;
  const configPath = opts.configPath ?? (await pickConfig(ctx, skillPath));
  if (!configPath) return undefined;
  const choice = opts.split
    ? { split: opts.split, ...(opts.lmModel ? { lmModel: opts.lmModel } : {}) }
    : await pickSplitAndModel();
  if (!choice) return undefined;
  const overrides = [
    ...(choice.lmModel ? ['model.target_backend=vscode-lm', `model.target=${choice.lmModel}`] : []),
    ...(opts.overrides ?? []),
  ];
  const evalsRoot = join(dirname(configPath), EVALS_DIR);
  let outDir = opts.outDir;
  const earlier = outDir || opts.aa ? undefined : unfinishedEvaluation(evalsRoot, skillPath, choice.split);
  const keys = await collectKeys(ctx);
  if (earlier) {
    const answer = await continueOrNew(earlier, basename(skillPath), choice.split);
    if (!answer) return undefined;
    if (answer === 'continue') outDir = earlier.dir;
    if (
      answer === 'cancel-and-new' &&
      !(await cancelEarlierBatch(ctx, earlier, { configPath, overrides, keys }))
    )
      return undefined;
  }
  const params: EvalParams = {
    configPath,
    skillPath,
    split: choice.split,
    overrides,
    keys,
    outDir:
      outDir ??
      join(
        evalsRoot,
        `${basename(skillPath, '.md')}_${choice.split}${opts.aa ? `_aa${opts.aa}` : ''}_${timestamp()}`,
      ),
    ...(opts.aa ? { aa: opts.aa } : {}),
  };
  let batch: ReturnType<typeof followBatch> | undefined;
  try {
    if (choice.lmModel) {
      await ensureLmAccess(
        ctx,
        choice.lmModel,
        'SkillOpt sends the skill and the evaluation tasks to this model to score the skill.',
      );
    }
    const engine = await ctx.engine();
    const result = await withProgress(
      opts.aa
        ? `SkillOpt: scoring ${basename(skillPath)} ${opts.aa} times on ${choice.split} (A/A check)…`
        : `SkillOpt: evaluating ${basename(skillPath)} on ${choice.split}…`,
      (token, progress) => {
        batch = followBatch(ctx, skillPath, progress);
        return engine.request(EngineRequests.evaluate, params, { token, timeoutMs: 0 });
      },
    );
    ctx.log.info(
      `[eval] ${skillPath} on ${result.split}: ${scoreWords(result.hard, result.soft, String)}, ${result.n_items} tasks`,
    );
    void showEvalResult(result, skillPath);
    return result;
  } catch (err) {
    const out = batch?.last();
    if (out)
      void vscode.window.showInformationMessage(
        `SkillOpt: the evaluation of ${basename(skillPath)} stopped; its ${describeBatch(out)} keeps running and is paid for. Evaluate ${basename(skillPath)} on ${choice.split} again to collect it.`,
      );
    else await showEngineError(ctx, `cannot evaluate ${basename(skillPath)}`, err);
    return undefined;
  } finally {
    batch?.dispose();
  }
}

export function evalReport(result: EvalResult, skillPath: string): string {
  const rows = resultRows(result);
  const lines = [
    `# SkillOpt evaluation: ${basename(skillPath)}`,
    '',
    `- Skill: ${skillPath}`,
    `- Split: ${result.split} (${result.n_items} tasks)`,
    `- Score: ${scoreWords(result.hard, result.soft, formatScore)}`,
    `- Spend: ${result.model_calls} target calls${result.cache_hits ? ` (${result.cache_hits} more answered from the response cache, free)` : ''}, ${result.prompt_tokens} prompt + ${result.completion_tokens} completion tokens, ${result.simulated ? 'simulated target (no price)' : result.dollars === null ? 'unknown price' : `$${result.dollars.toFixed(4)}`}`,
    ...(result.errored?.length
      ? [`- Not answered by the target (not scored): ${result.errored.length} task(s)`]
      : []),
    `- Files: ${result.out_dir}`,
    '',
    ...(result.aa
      ? [
          '## A/A check',
          '',
          'The same skill was scored several times and each run compared with every other as if it were a candidate: nothing differs but noise, so every accept below is a false accept.',
          '',
          // Our own words, not model text: nothing to escape.
          ...aaText(result.aa).map((l) => `- ${l.trim()}`),
          '',
        ]
      : []),
    '| task type | tasks | fully right | with partial credit |',
    '| --- | ---: | ---: | ---: |',
    ...Object.entries(result.by_type)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([type, s]) => `| ${type} | ${s.total} | ${formatScore(s.hard)} | ${formatScore(s.soft)} |`),
    '',
    `## Failing tasks (${result.failing.length})`,
    '',
    // The preview does not follow file links; each task's conversation opens from its row in the
    // Runs view (Evaluations).
    ...(result.failing.length
      ? ['Open a conversation from the task’s row under **Evaluations** in the Runs view.', '']
      : []),
    ...result.failing.map((id) => {
      const t = failingTaskItem(id, rows.get(id));
      return `- **${md(id)}**${t.detail ? `: ${md(t.detail)}` : ''}`;
    }),
    '',
  ];
  return lines.join('\n');
}

/** Each task's result row of an evaluation, by id. */
function resultRows(result: EvalResult): Map<string, RolloutRow> {
  const file = join(new RunLayout(result.out_dir).evalOnlyDir(result.split), EVAL_FILE.results);
  return new Map(readJsonl(file, RESULT_ROWS).map((r) => [r.id, r]));
}

/** Model text shown in the report as text: Markdown and HTML in it are not interpreted. */
function md(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+!|<>~]/g, (c) => `\\${c}`);
}

/** The Runs tree's Report row of an evaluation: its report, rendered, from eval_summary.json. */
export async function openEvaluation(dir: unknown): Promise<void> {
  const e = typeof dir === 'string' ? readEvaluation(dir) : undefined;
  if (!e) {
    void vscode.window.showInformationMessage(`SkillOpt: no evaluation summary in ${String(dir)}.`);
    return;
  }
  const s = e.summary;
  const result: EvalResult = {
    split: s.split,
    n_items: s.n_items,
    hard: s.hard,
    soft: s.soft,
    by_type: s.by_type,
    failing: s.failing,
    ...(s.errored ? { errored: s.errored } : {}),
    // The folder it is in now, wherever it was written from.
    out_dir: e.dir,
    model_calls: s.model_calls ?? 0,
    ...(s.cache_hits ? { cache_hits: s.cache_hits } : {}),
    prompt_tokens: s.prompt_tokens ?? 0,
    completion_tokens: s.completion_tokens ?? 0,
    dollars: s.dollars ?? null,
    ...(s.simulated ? { simulated: true as const } : {}),
    ...(s.aa ? { aa: s.aa } : {}),
  };
  await showReport(result, s.skill ?? e.dir);
}

/** An evaluation's report, rendered, as the training report opens. */
async function showReport(result: EvalResult, skillPath: string): Promise<void> {
  const doc = await vscode.workspace.openTextDocument({
    language: 'markdown',
    content: evalReport(result, skillPath),
  });
  await vscode.commands.executeCommand('markdown.showPreview', doc.uri);
}

async function showEvalResult(result: EvalResult, skillPath: string): Promise<void> {
  const failing = result.failing.length;
  const buttons = ['Show Report', ...(failing ? [`Failing Tasks (${failing})`] : [])];
  const choice = await vscode.window.showInformationMessage(
    result.aa
      ? `SkillOpt: ${basename(skillPath)} on ${result.split}: ${aaSummary(result.aa)}.${result.aa.strict_accepts ? ' Every strict accept is noise: see the report.' : ''}`
      : `SkillOpt: ${basename(skillPath)} on ${result.split} (${result.n_items} tasks): ${scoreWords(result.hard, result.soft, formatScore)}.`,
    ...buttons,
  );
  if (choice === 'Show Report') {
    await showReport(result, skillPath);
  } else if (choice?.startsWith('Failing')) {
    const rows = resultRows(result);
    const conversationOf = conversationPaths(new RunLayout(result.out_dir).evalOnlyDir(result.split));
    const pick = await vscode.window.showQuickPick(
      result.failing.map((id) => ({
        ...failingTaskItem(id, rows.get(id)),
        path: conversationOf(id),
      })),
      {
        placeHolder: 'Open the conversation of a failing task',
        matchOnDescription: true,
        matchOnDetail: true,
      },
    );
    if (pick && existsSync(pick.path)) await showConversation(pick.path);
  }
}
