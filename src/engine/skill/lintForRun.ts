/**
 * What the SKILL.md lint means for one run, decided by its target before anything is spent:
 * findings that keep the agent the run targets from loading the skill refuse the run; the rest
 * are one-line notices. A chat target reads the skill as its system prompt, front matter and all,
 * so nothing refuses it and a bare Markdown skill (the reference's format) is not even noted.
 */
import { basename } from 'node:path';
import { SkillOptError } from '../errors';
import type { AgentName } from '../llm/agents/presets';
import { agentFor } from '../llm/agents/fromConfig';
import { skillDirName } from '../train/rolloutItem';
import { parseFrontMatter } from './frontMatter';
import { lintSkillFile, type LintFinding, type LintRule } from './lint';

export type SkillHost = 'chat' | AgentName | 'command';

/**
 * The findings that stop each host from loading the skill as a run installs it (README, "Skill lint").
 * Codex's loader refuses a missing or over-long name or description; VS Code's, which Copilot
 * shares, a missing name or description; Claude Code takes the folder's name and cuts a long
 * description. A broken YAML block loads nowhere. A missing block is not listed: the run then
 * writes one (the folder's name, a generic description) and says so.
 */
export const LOAD_BLOCKERS: Record<SkillHost, readonly LintRule[]> = {
  chat: [],
  claude: ['front-matter-yaml'],
  codex: ['front-matter-yaml', 'name-missing', 'name-length', 'description-missing', 'description-length'],
  copilot: ['front-matter-yaml', 'name-missing', 'description-missing'],
  command: ['front-matter-yaml'],
};

const HOST_LABEL: Record<SkillHost, string> = {
  chat: 'the chat target',
  claude: 'Claude Code',
  codex: 'Codex',
  copilot: 'Copilot CLI',
  command: 'the target command',
};

export function skillHost(targetBackend: string, runsCommand: boolean): SkillHost {
  return agentFor(targetBackend) ?? (runsCommand ? 'command' : 'chat');
}

const where = (f: LintFinding): string => `${f.file}:${f.range.startLine + 1}:${f.range.startCol + 1}`;

/**
 * Lint the run's skill for its target: throws a SkillOptError('skill') listing every finding that
 * keeps the target from loading it, returns the others as one-line notices.
 */
export function checkSkillForRun(
  skill: { path: string; text: string },
  model: { target_backend: string; target_skill_name: string },
  runsCommand: boolean,
): string[] {
  const host = skillHost(model.target_backend, runsCommand);
  const findings = lintSkillFile(skill.path, skill.text).filter(
    (f) => !(host === 'chat' && f.rule === 'front-matter-missing'),
  );
  const blockers = findings.filter((f) => LOAD_BLOCKERS[host].includes(f.rule));
  const folder = host === 'copilot' ? runFolderProblem(skill.text, model) : undefined;
  if (blockers.length > 0 || folder) {
    const first = blockers[0];
    throw new SkillOptError(
      'skill',
      `${HOST_LABEL[host]}, the run's target, would not load this skill: ${[
        ...blockers.map((f) => `line ${f.range.startLine + 1}: ${f.message}`),
        ...(folder ? [folder] : []),
      ].join(' | ')}`,
      {
        file: skill.path,
        ...(first ? { line: first.range.startLine + 1 } : { key: 'model.target_skill_name' }),
      },
    );
  }
  return findings
    .filter((f) => !LOAD_BLOCKERS[host].includes(f.rule))
    .map((f) =>
      f.rule === 'front-matter-missing'
        ? `${where(f)}: no front matter: this run gives ${HOST_LABEL[host]} \`name: ${runFolder(skill.text, model)}\` and a generic description, so the skill triggers on that, not on yours. Fix: add \`name\` and \`description\` at the top of ${basename(skill.path)}`
        : `${where(f)}: ${f.message}`,
    );
}

/** The folder the agent target installs the skill in (as the rollout names it). */
function runFolder(text: string, model: { target_skill_name: string }): string {
  return model.target_skill_name !== 'skill' ? model.target_skill_name : skillDirName(text);
}

/** Copilot, as VS Code, skips a skill whose name is not its folder's: the run's folder counts here. */
function runFolderProblem(text: string, model: { target_skill_name: string }): string | undefined {
  const name = parseFrontMatter(text)?.name?.trim();
  const folder = runFolder(text, model);
  if (!name || name === folder) return undefined;
  return model.target_skill_name !== 'skill'
    ? `model.target_skill_name installs it as ${folder}/ but its name is "${name}", and Copilot skips a skill whose name is not its folder's. Fix: set model.target_skill_name to ${name}, or remove it`
    : `its name "${name}" cannot be a folder name, and Copilot skips a skill whose name is not its folder's. Fix: use letters, digits, ".", "_" and "-" in the name`;
}
