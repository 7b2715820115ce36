/** What the `command` target backend (command.ts) is told: which agent or command, and how to run it. */
import type { Logger } from '../log';
import type { Delivery } from './agents/delivery';
import type { AgentName, AgentSettings } from './agents/presets';

export interface CommandBackendOptions {
  /** A known agent CLI; its preset decides argv, skill folder, output format and isolation. */
  agent?: AgentName;
  /** The agent's program (a name on PATH or a full path); default the preset's. */
  program?: string;
  /** A custom command instead of a preset: argv template, or a command string split shell-style. */
  command?: string | readonly string[];
  /** Must be true: agent CLIs run tools and edit files. */
  trusted: boolean;
  /** Label for accounting and run records; defaults to the model the settings name, else the program. */
  model?: string;
  /** What the config says about the agent (model, base URL, effort, sandbox, ...). */
  settings?: AgentSettings;
  /** `native` (default): the prompt carries only the task. `pointer`: one line names SKILL.md too. */
  delivery?: Delivery;
  /** Wall-clock limit per task (default 600 s). */
  timeoutMs?: number;
  /** Wait between SIGTERM and SIGKILL (default 5 s). */
  killGraceMs?: number;
  /** Bytes of stdout (and of stderr) kept; head and tail survive (default 1 MiB for presets, 64 KiB otherwise). */
  maxOutputBytes?: number;
  /** Leave each task folder on disk and report its path in the trace. */
  keepWorkspaces?: boolean;
  /** Runs again of a task whose final answer is empty (default 0; presets: EXEC_EMPTY_RESPONSE_RETRIES). */
  emptyAnswerRetries?: number;
  /** The folder SkillOpt owns for task folders (default `<os temp>/skillopt-agents`). */
  workspaceRoot?: string;
  /** Skill directory name; overrides the request's `task.skillName`. */
  skillName?: string;
  /** `description` in the SKILL.md front matter, for a skill that has none. */
  skillDescription?: string;
  /** The skill's folder: its references/, scripts/ and assets/ go beside SKILL.md (nothing else of it). */
  skillFolder?: string;
  /** Extra variables for the agent, set as given. */
  env?: Record<string, string>;
  /** Names of variables passed through from the parent environment, beyond the preset's own. */
  passEnv?: readonly string[];
  /** The environment the allow-list reads from (default process.env). */
  parentEnv?: NodeJS.ProcessEnv;
  /** The user's home, read only for credential files to copy (default os.homedir()). */
  userHome?: string;
  logger?: Logger;
}
