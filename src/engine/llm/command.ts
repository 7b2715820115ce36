/**
 * The `command` target backend: runs an agent CLI once per task in a fresh, isolated workspace,
 * like the reference's exec targets (§9.4), but with the skill where the agent really looks.
 *
 * Known agents (`agent: 'claude' | 'codex' | 'copilot'`, see agents/presets.ts) get:
 *  - native delivery: the skill folder goes where that CLI discovers project skills
 *    (`.claude/skills/<name>/`, `.agents/skills/<name>/`, `.github/skills/<name>/`) and the prompt
 *    carries only the task, so the skill's `description` decides whether it is used;
 *    `delivery: 'pointer'` adds one line naming the file, as before;
 *  - machine-readable output (Claude stream-json, Codex --json, Copilot JSON) read into a
 *    transcript: the answer, whether the skill was loaded, tool calls, turns, tokens and cost;
 *  - isolation: a fresh HOME, config folders and XDG folders per task, an allow-listed
 *    environment, the workspace under a folder SkillOpt owns, all removed afterwards.
 *
 * A custom command (`command`: an argv template, or a string split shell-style, no shell) gets the
 * same workspace and isolation, with the skill under `.agents/skills/<name>/` and its stdout as the
 * answer. Placeholders: {task_file}, {skill_file}, {workspace}, {prompt}.
 *
 * Every run ends answered (a BackendReply) or errored (an AgentRunError with `kind`
 * not_installed | auth | api | crash | timeout): an errored run is never returned as an answer.
 *
 * Agent CLIs act on files and run tools, so the backend refuses to exist unless the caller states
 * that the workspace is trusted.
 */
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { cancelledError, SkillOptError } from '../errors';
import { SKILL_DIR_NAME, SKILL_DIR_NAME_RULE } from '../skill/dirName';
import { writeFileAtomic } from '../store/atomic';
import { splitCommand } from './agents/argv';
import {
  CUSTOM_SKILL_ROOT,
  DEFAULT_DESCRIPTION,
  installSkill,
  renderPrompt,
  type Delivery,
} from './agents/delivery';
import { AgentRunError } from './agents/errors';
import { copyFolderReadOnly, workspaceFolder } from './agents/docFolders';
import { copyInputFile } from './agents/inputFiles';
import {
  allowedEnv,
  copySkillFolder,
  defaultAgentsRoot,
  ensurePrivateDir,
  enterFixedDirs,
  taskProcessEnv,
  instructionFilesAbove,
  leaveFixedDirs,
  makeTaskDirs,
  removeTaskDirs,
  skillResourcesDigest,
  sweepStaleTaskDirs,
  type TaskDirs,
} from './agents/isolation';
import { rerunWhileEmpty } from './agents/emptyAnswer';
import { agentSpent, notInstalledError, readFinishedRun, stoppedRunUsage } from './agents/outcome';
import { isAgentName, PRESETS, type AgentPreset } from './agents/presets';
import { runProcess, SpawnError, type ProcessResult } from './agents/process';
import { trackTaskFolder, untrackTaskFolder } from './agents/exitCleanup';
import { runExitSpend, taskExitSpend, type AtExitSpend } from './agents/exitSpend';
import { machineWideWarning } from './agents/machineWide';
import type { CommandBackendOptions } from './commandOptions';
import type { BackendReply, ChatBackend, ChatRequest, TaskContext, Usage } from './types';

export { splitCommand } from './agents/argv';
export { renderPrompt, renderSkillFile } from './agents/delivery';
export { AgentRunError, classifyRun } from './agents/errors';
export { type AgentName, type AgentSettings } from './agents/presets';
export { type CommandBackendOptions } from './commandOptions';

/** Task folders older than this are a crashed run's leftovers and are removed at start. */
const STALE_MS = 24 * 3600 * 1000;

export class CommandBackend implements ChatBackend {
  readonly provider = 'command';
  /** The API the agent CLI talks to, whose prices apply; `command` (unknown) for a custom command. */
  readonly billedProvider: string;
  readonly model: string;
  readonly cacheParams: Record<string, unknown>;
  /** The preset in use; undefined for a custom command. */
  readonly preset: AgentPreset | undefined;
  private readonly template: readonly string[] | undefined;
  private readonly program: string;
  private readonly delivery: Delivery;
  private readonly agentsRoot: string;
  private readonly errors = new WeakMap<TaskContext, AgentRunError>();
  private warnedAbove = false;
  private sweptStale = false;
  /** Copilot unpacks its package into the shared cache on first start: that first run goes alone. */
  private firstRun: Promise<unknown> | undefined;

  constructor(private readonly options: CommandBackendOptions) {
    if (options.trusted !== true) {
      throw new SkillOptError(
        'untrusted',
        'The command target backend runs an agent program that can read and change files',
        {
          key: 'model.target_command',
          fix: 'trust this workspace first (VS Code: "Workspaces: Manage Workspace Trust"), then start the run again',
        },
      );
    }
    if (options.agent !== undefined && !isAgentName(options.agent)) {
      throw new SkillOptError('config', `Unknown agent "${String(options.agent)}"`, {
        key: 'model.target_backend',
        fix: 'use claude_code_exec, codex_exec or copilot_exec, or write the command out in model.target_command',
      });
    }
    this.preset = options.agent ? PRESETS[options.agent] : undefined;
    if (this.preset) {
      this.template = undefined;
      this.program = options.program || this.preset.program;
    } else {
      if (options.command === undefined) {
        throw new SkillOptError('config', 'The command backend needs an agent or a command to run', {
          key: 'model.target_command',
          fix: 'set model.target_backend to claude_code_exec, codex_exec or copilot_exec, or give model.target_command',
        });
      }
      this.template =
        typeof options.command === 'string' ? splitCommand(options.command) : [...options.command];
      if (this.template.length === 0 || !this.template[0]) {
        throw new SkillOptError('config', 'The target command is empty', {
          key: 'model.target_command',
          fix: 'give the agent program and its arguments, for example ["my-agent", "--task", "{task_file}"]',
        });
      }
      this.program = this.template[0];
    }
    this.delivery = options.delivery ?? 'native';
    this.agentsRoot = options.workspaceRoot ?? defaultAgentsRoot();
    const settings = options.settings ?? {};
    this.billedProvider =
      this.preset?.billedProvider(settings, options.parentEnv ?? process.env) ?? 'command';
    this.model = options.model ?? settings.model ?? basename(this.program);
    const resources = options.skillFolder ? skillResourcesDigest(options.skillFolder) : undefined;
    this.cacheParams = {
      ...(this.preset ? { agent: this.preset.name } : { command: [...this.template!] }),
      delivery: this.delivery,
      ...(resources ? { resources } : {}),
      ...(Object.keys(settings).length ? { settings: { ...settings } } : {}),
    };
  }

  /** The program run for a task (a name on PATH or a path). */
  get programName(): string {
    return this.program;
  }

  /** A short name for messages: `Claude Code (claude)` or the program. */
  get label(): string {
    return this.preset ? `${this.preset.label} (${this.program})` : `The target command "${this.program}"`;
  }

  /** Where the skill goes, relative to the workspace. */
  get skillRoot(): string {
    return this.preset?.skillRoot ?? CUSTOM_SKILL_ROOT;
  }

  /**
   * The AgentRunError this backend threw for a task on its last attempt. The model client rebuilds
   * errors as plain SkillOptErrors (after redacting them); the agent target's client wrapper
   * (agents/fromConfig.ts) uses this to hand the training loop the error with its kind.
   */
  lastError(task: TaskContext): AgentRunError | undefined {
    return this.errors.get(task);
  }

  async call(req: ChatRequest, signal: AbortSignal, spentAtExit?: (u: Usage) => void): Promise<BackendReply> {
    if (req.role !== 'target') {
      throw new SkillOptError('config', 'The command backend can only serve the target role', {
        key: 'model.optimizer_backend',
        fix: 'use a chat model backend for the optimizer',
      });
    }
    if (!req.task) {
      throw new SkillOptError(
        'internal',
        `A ${req.stage} call reached the command backend without a task context`,
      );
    }
    this.errors.delete(req.task);
    const task: TaskContext = { ...req.task, skillName: this.options.skillName ?? req.task.skillName };
    // validate refuses a bad model.target_skill_name; this guards every other caller's name too.
    if (!SKILL_DIR_NAME.test(task.skillName)) {
      throw new SkillOptError('config', `"${task.skillName}" cannot be used as a skill directory name`, {
        key: 'model.target_skill_name',
        fix: `use ${SKILL_DIR_NAME_RULE}`,
      });
    }
    if (this.preset?.name === 'copilot') {
      if (this.firstRun) await this.firstRun.catch(() => undefined);
      else {
        const first = this.runTask(task, signal, spentAtExit);
        this.firstRun = first;
        return this.remember(req.task, first);
      }
    }
    return this.remember(req.task, this.runTask(task, signal, spentAtExit));
  }

  private async remember(key: TaskContext, work: Promise<BackendReply>): Promise<BackendReply> {
    try {
      return await work;
    } catch (err) {
      if (err instanceof AgentRunError) this.errors.set(key, err);
      throw err;
    }
  }

  /** One task, run again while its final answer is empty (agents/emptyAnswer.ts). */
  private runTask(
    task: TaskContext,
    signal: AbortSignal,
    spentAtExit: ((u: Usage) => void) | undefined,
  ): Promise<BackendReply> {
    const earlier: Usage[] = [];
    const atExit = taskExitSpend(spentAtExit, earlier);
    return rerunWhileEmpty(
      task,
      this.options.emptyAnswerRetries ?? 0,
      (t) => this.runOnce(t, signal, atExit),
      (n, of) =>
        this.options.logger?.log(
          'warn',
          'command',
          `task ${task.taskId}: ${this.label} gave an empty answer; running it again (${n} of ${of})`,
        ),
      earlier,
    );
  }

  private async runOnce(task: TaskContext, signal: AbortSignal, atExit?: AtExitSpend): Promise<BackendReply> {
    if (!this.sweptStale) {
      this.sweptStale = true;
      sweepStaleTaskDirs(this.agentsRoot, STALE_MS);
    }
    const dirs = makeTaskDirs(this.agentsRoot);
    const keep = this.options.keepWorkspaces === true;
    if (!keep) trackTaskFolder(dirs.root);
    this.warnAboutInstructionFiles(dirs);
    const fixed = this.preset?.fixedDirs?.() ?? [];
    enterFixedDirs(fixed);
    try {
      return await this.runIn(dirs, task, signal, atExit);
    } finally {
      if (!keep) {
        removeTaskDirs(dirs);
        untrackTaskFolder(dirs.root);
      }
      leaveFixedDirs(fixed);
    }
  }

  private async runIn(
    dirs: TaskDirs,
    task: TaskContext,
    signal: AbortSignal,
    atExit: AtExitSpend | undefined,
  ): Promise<BackendReply> {
    const opts = this.options;
    const skillDir = join(dirs.work, ...this.skillRoot.split('/'), task.skillName);
    const taskFile = join(dirs.work, 'task.md');
    // An empty skill is no skill (evaluation.no_skill_baseline): nothing is installed or pointed at.
    const noSkill = task.skill.trim() === '';
    if (opts.skillFolder && !noSkill) copySkillFolder(opts.skillFolder, skillDir);
    const skillFile = noSkill
      ? join(skillDir, 'SKILL.md')
      : installSkill(skillDir, task, opts.skillDescription ?? DEFAULT_DESCRIPTION);
    writeFileAtomic(taskFile, task.prompt.endsWith('\n') ? task.prompt : `${task.prompt}\n`);
    for (const f of task.files ?? []) copyInputFile(f.path, dirs.work, f.name);
    for (const d of task.folders ?? []) {
      copyFolderReadOnly(d.path, workspaceFolder(dirs.work, d.name), {
        key: 'env.data_dirs',
        fix: 'remove the link, or point env.data_dirs at a folder that holds the documents themselves',
      });
    }
    const delivery = noSkill ? 'native' : (task.delivery ?? this.delivery);
    const prompt = renderPrompt(task, delivery, this.skillRoot);
    const parentEnv = opts.parentEnv ?? process.env;
    let argv: string[];
    let presetEnv: Record<string, string> = {};
    let seeded: string[] = [];
    if (this.preset) {
      const built = this.preset.build({
        dirs,
        prompt,
        program: this.program,
        settings: opts.settings ?? {},
        userHome: opts.userHome ?? homedir(),
        parentEnv,
        sharedCache: join(ensurePrivateDir(this.agentsRoot), 'shared-cache'),
      });
      argv = built.argv;
      presetEnv = built.env;
      seeded = built.seeded;
    } else {
      const values: Record<string, string> = {
        task_file: taskFile,
        skill_file: skillFile,
        workspace: dirs.work,
        prompt,
      };
      argv = this.template!.map((arg) =>
        arg.replace(/\{(task_file|skill_file|workspace|prompt)\}/g, (_, name: string) => values[name]),
      );
    }
    const env: Record<string, string> = {
      ...allowedEnv(parentEnv, [...(this.preset?.passEnv ?? []), ...(opts.passEnv ?? [])]),
      ...taskProcessEnv(dirs, task.taskId),
      ...presetEnv,
      ...opts.env,
    };
    opts.logger?.log('debug', 'command', `task ${task.taskId}: ${this.program} in ${dirs.work}`);
    let run: ProcessResult;
    // Until it ends, an exit at once records what it has spent so far.
    const exitSpend = runExitSpend(atExit, (soFar) => {
      const used = stoppedRunUsage({ run: soFar, task, dirs, preset: this.preset });
      return used && agentSpent(used);
    });
    try {
      run = await runProcess(argv, {
        cwd: dirs.work,
        env,
        timeoutMs: opts.timeoutMs ?? 600_000,
        killGraceMs: opts.killGraceMs ?? 5_000,
        maxOutputBytes: opts.maxOutputBytes ?? (this.preset ? 1024 * 1024 : 64 * 1024),
        signal,
        onStart: exitSpend.onStart,
        ...(this.preset?.stopOn ? { stopOn: this.preset.stopOn } : {}),
      }).finally(exitSpend.off);
    } catch (err) {
      if (err instanceof SpawnError) throw notInstalledError(err, this.label, this.preset);
      throw err;
    }
    if (run.cancelled) {
      // Stopped by the person: no answer, but what the agent had spent is paid for (spentBy).
      const used = stoppedRunUsage({ run, task, dirs, preset: this.preset });
      throw Object.assign(cancelledError('The target command'), {
        ...(used ? { spent: agentSpent(used) } : {}),
      });
    }
    return readFinishedRun({
      run,
      task,
      prompt,
      dirs,
      skillFile,
      seeded,
      preset: this.preset,
      program: this.program,
      label: this.label,
      model: this.model,
      delivery,
      keepWorkspaces: opts.keepWorkspaces,
      logger: opts.logger,
    });
  }

  /**
   * Warns once when an instruction file sits above the workspaces (a custom program could read it;
   * the presets read none: markProjectRoot, claudeMdExcludes, Codex's project_root_markers) or
   * machine-wide (a preset's CLI reads it).
   */
  private warnAboutInstructionFiles(dirs: TaskDirs): void {
    if (this.warnedAbove) return;
    this.warnedAbove = true;
    const found = this.preset ? [] : instructionFilesAbove(dirs.work).filter((p) => !p.startsWith(dirs.root));
    if (found.length) {
      this.options.logger?.log(
        'warn',
        'command',
        `instruction files or skills above the agent workspaces (${this.agentsRoot}) may reach the agent: ${found.join(', ')}. Move them, or set a different workspace folder`,
      );
    }
    const machineWide = this.preset && machineWideWarning(this.preset.name, this.preset.label);
    if (machineWide) this.options.logger?.log('warn', 'command', machineWide);
  }
}
