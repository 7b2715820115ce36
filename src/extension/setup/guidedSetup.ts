/**
 * The short guided setup of "Optimize This Skill" when no skillopt.yaml sits beside the skill:
 * task file, scorer, target and optimizer backend and model, epochs. It writes the config beside
 * the skill, opens it, and returns its path. Escape at any step cancels without writing.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import * as vscode from 'vscode';
import { isRunFolder } from '../../engine/store/runReader';
import { copilotModel } from '../config';
import { configFileName } from '../constants';
import { agentTargetOptions, isAgentBackend, type AgentTargetOption } from './agentTargets';
import {
  renderConfig,
  setupBackends,
  setupScorers,
  suggestName,
  type RoleChoice,
  type SetupAnswers,
  type SetupBackend,
} from './configTemplate';

const steps = 5;

function title(n: number): string {
  return `SkillOpt setup (${n}/${steps})`;
}

/** Relative path with forward slashes, as YAML configs are shared across systems. */
function rel(from: string, to: string): string {
  const r = relative(from, to);
  return (r || '.').split(sep).join('/');
}

/** Files a run wrote (reports, patches, results) are not task files. */
function insideRunFolder(file: string): boolean {
  for (let dir = dirname(file), i = 0; i < 6; i++, dir = dirname(dir)) {
    if (isRunFolder(dir)) return true;
    if (dirname(dir) === dir) break;
  }
  return false;
}

type DataPick = vscode.QuickPickItem & { action: 'file' | 'browse' | 'folder'; path?: string };

async function pickData(skillDir: string): Promise<SetupAnswers['data'] | undefined> {
  const found = await vscode.workspace.findFiles(
    '**/*.{jsonl,json,csv}',
    '**/{node_modules,.skillopt,.vscode,.git}/**',
    200,
  );
  const candidates = found
    .map((u) => u.fsPath)
    .filter((p) => !/(^|[\\/])(package(-lock)?|tsconfig|jsconfig)\.json$/.test(p) && !insideRunFolder(p))
    .sort((a, b) => {
      // Files next to the skill first, then by depth, then by name.
      const da = dirname(a) === skillDir ? 0 : 1;
      const db = dirname(b) === skillDir ? 0 : 1;
      return da - db || a.split(sep).length - b.split(sep).length || a.localeCompare(b);
    })
    .slice(0, 50);
  const items: DataPick[] = [
    ...candidates.map((p) => ({
      label: `$(file) ${rel(skillDir, p)}`,
      description: p.endsWith('.csv') ? 'CSV' : p.endsWith('.jsonl') ? 'JSON Lines' : 'JSON',
      action: 'file' as const,
      path: p,
    })),
    { label: '$(folder-opened) Browse for a task file…', action: 'browse' },
    { label: '$(folder) Use a split folder (train/, val/, test/)…', action: 'folder' },
  ];
  const pick = await vscode.window.showQuickPick(items, {
    title: title(1),
    placeHolder: 'Tasks to train on: each needs a question and an answer (JSONL, JSON or CSV)',
    ignoreFocusOut: true,
  });
  if (!pick) return undefined;
  if (pick.action === 'file' && pick.path) return { mode: 'ratio', path: rel(skillDir, pick.path) };
  const chosen = await vscode.window.showOpenDialog({
    canSelectFiles: pick.action === 'browse',
    canSelectFolders: pick.action === 'folder',
    canSelectMany: false,
    defaultUri: vscode.Uri.file(skillDir),
    ...(pick.action === 'browse' ? { filters: { Tasks: ['jsonl', 'json', 'csv'] } } : {}),
    openLabel: pick.action === 'browse' ? 'Use Task File' : 'Use Split Folder',
  });
  const path = chosen?.[0]?.fsPath;
  if (!path) return undefined;
  return pick.action === 'browse'
    ? { mode: 'ratio', path: rel(skillDir, path) }
    : { mode: 'split_dir', dir: rel(skillDir, path) };
}

async function pickScorer(): Promise<string | undefined> {
  const pick = await vscode.window.showQuickPick(
    setupScorers.map((s) => ({ label: s.id, detail: s.detail })),
    {
      title: title(2),
      placeHolder: 'How an answer is scored against the expected one',
      ignoreFocusOut: true,
    },
  );
  return pick?.label;
}

async function pickRole(
  role: 'target' | 'optimizer',
  step: number,
  same?: RoleChoice,
): Promise<RoleChoice | undefined> {
  type Item = vscode.QuickPickItem & { backend?: SetupBackend; same?: boolean; agent?: AgentTargetOption };
  // Agent CLIs only answer tasks: they are targets, never the optimizer.
  const agents: Item[] =
    role === 'target'
      ? [
          { label: 'Agent CLIs', kind: vscode.QuickPickItemKind.Separator },
          ...agentTargetOptions().map((a) => ({
            label: a.label,
            description: a.description,
            detail: a.detail,
            agent: a,
          })),
        ]
      : [];
  const items: Item[] = [
    ...(same && !isAgentBackend(same.backend)
      ? [{ label: '$(copy) Same as the target', description: `${same.backend} · ${same.model}`, same: true }]
      : []),
    ...setupBackends.map((b) => ({ label: b.label, detail: b.detail, backend: b.id })),
    ...agents,
  ];
  let pick: Item | undefined;
  for (;;) {
    pick = await vscode.window.showQuickPick(items, {
      title: title(step),
      placeHolder:
        role === 'target'
          ? 'Target: the model (or agent CLI) that reads the skill and answers the tasks'
          : 'Optimizer: the model that reflects on the results and edits the skill',
      ignoreFocusOut: true,
      matchOnDescription: true,
    });
    if (!pick?.agent || pick.agent.installed) break;
    // A missing CLI: say how to install it, and offer the list again.
    const missing = pick.agent;
    void vscode.window
      .showWarningMessage(missing.missingMessage, 'Copy Install Command')
      .then((b) => (b ? vscode.env.clipboard.writeText(missing.install) : undefined));
  }
  if (!pick) return undefined;
  if (pick.agent) {
    const model = await vscode.window.showInputBox({
      title: title(step),
      prompt: `Model ${pick.agent.label.replace(/^\$\([^)]*\) /, '')} runs (model.target); leave empty for the CLI's default`,
      value: '',
      ignoreFocusOut: true,
    });
    return model === undefined ? undefined : { backend: pick.agent.backend, model: model.trim() };
  }
  if (pick.same && same) {
    const sim = same.backend === 'sim';
    return sim ? { backend: 'sim', model: 'sim-optimizer' } : { ...same };
  }
  const backend = setupBackends.find((b) => b.id === pick.backend);
  if (!backend) return undefined;
  if (backend.id === 'sim') return { backend: 'sim', model: backend.defaultModel[role] };
  const suggested = backend.id === 'vscode-lm' ? copilotModel() || 'auto' : backend.defaultModel[role];
  const model = await vscode.window.showInputBox({
    title: title(step),
    prompt:
      backend.id === 'vscode-lm'
        ? 'Model: "auto", a family such as gpt-4o, or vendor/family such as copilot/gpt-4o'
        : backend.id === 'azure_openai'
          ? 'Deployment name'
          : 'Model name',
    value: suggested,
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim() ? undefined : 'Enter a model name'),
  });
  if (model === undefined) return undefined;
  const choice: RoleChoice = { backend: backend.id, model: model.trim() };
  if (backend.id === 'openai-compatible') {
    const url = await vscode.window.showInputBox({
      title: title(step),
      prompt: 'Base URL of the server (it must speak the Chat Completions API)',
      value: 'http://localhost:11434/v1',
      ignoreFocusOut: true,
      validateInput: (v) => (/^https?:\/\/\S+$/.test(v.trim()) ? undefined : 'Enter an http(s) URL'),
    });
    if (url === undefined) return undefined;
    choice.baseUrl = url.trim();
  }
  return choice;
}

async function pickEpochs(): Promise<number | undefined> {
  const v = await vscode.window.showInputBox({
    title: title(5),
    prompt: 'Epochs: passes over the training tasks',
    value: '2',
    ignoreFocusOut: true,
    validateInput: (s) =>
      /^[1-9]\d{0,2}$/.test(s.trim()) ? undefined : 'Enter a whole number from 1 to 999',
  });
  return v === undefined ? undefined : Number(v.trim());
}

/** Runs the setup for the skill at `skillPath`; returns the written config, or undefined if cancelled. */
export async function runGuidedSetup(skillPath: string): Promise<string | undefined> {
  const skillDir = dirname(skillPath);
  const configPath = join(skillDir, configFileName);
  if (existsSync(configPath)) return configPath;
  const data = await pickData(skillDir);
  if (!data) return undefined;
  const scorer = await pickScorer();
  if (!scorer) return undefined;
  const target = await pickRole('target', 3);
  if (!target) return undefined;
  const optimizer = await pickRole('optimizer', 4, target);
  if (!optimizer) return undefined;
  let azureEndpoint: string | undefined;
  if (target.backend === 'azure_openai' || optimizer.backend === 'azure_openai') {
    azureEndpoint = await vscode.window.showInputBox({
      title: 'SkillOpt setup: Azure OpenAI',
      prompt: 'Endpoint of the Azure OpenAI resource',
      placeHolder: 'https://<resource>.openai.azure.com',
      ignoreFocusOut: true,
      validateInput: (v) => (/^https:\/\/\S+$/.test(v.trim()) ? undefined : 'Enter an https URL'),
    });
    if (azureEndpoint === undefined) return undefined;
  }
  const epochs = await pickEpochs();
  if (epochs === undefined) return undefined;
  const answers: SetupAnswers = {
    name: suggestName(basename(skillDir)),
    skill: rel(skillDir, skillPath),
    data,
    scorer,
    target,
    optimizer,
    epochs,
    ...(azureEndpoint ? { azureEndpoint: azureEndpoint.trim() } : {}),
  };
  writeFileSync(configPath, renderConfig(answers), 'utf8');
  const doc = await vscode.workspace.openTextDocument(configPath);
  await vscode.window.showTextDocument(doc, {
    viewColumn: vscode.ViewColumn.Beside,
    preview: false,
    preserveFocus: true,
  });
  return configPath;
}
