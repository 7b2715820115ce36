/**
 * The Runs view grouped by the skill each run trained: one row per skill file, named from its
 * front matter, with that skill's runs under it. Only when the workspace has runs of more than one
 * skill (a single group would be one more click for nothing), and unless the user asked for the
 * flat list (`skillopt.groupRunsBySkill`). Pure (no `vscode`): the tree provider adapts it.
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, extname } from 'node:path';
import { parseFrontMatter } from '../../engine/skill/frontMatter';
import { SKILL_FILE_NAME } from '../../engine/skill/lint';
import { TreeItemContext } from '../constants';
import { trainedSkillPath } from '../skills/skillRuns';
import { statusText, type RunView } from './liveState';
import { sortRuns, type NodeSpec } from './treeNodes';

export interface SkillGroup {
  /** The skill file; undefined for runs whose skill is not on this machine any more. */
  skillPath?: string;
  name: string;
  /** Newest first, running ones first (as the flat list orders them). */
  runs: RunView[];
}

/** The id of the group of runs whose skill cannot be found. */
const MISSING = 'skill:';

/** A skill's name: its front matter's `name`, else its folder's (SKILL.md) or its file's name. */
export function skillDisplayName(path: string, read: (p: string) => string = readText): string {
  const fallback =
    basename(path) === SKILL_FILE_NAME ? basename(dirname(path)) : basename(path, extname(path));
  try {
    return parseFrontMatter(read(path))?.name?.trim() || fallback;
  } catch {
    return fallback;
  }
}

function readText(path: string): string {
  return readFileSync(path, 'utf8');
}

/**
 * The runs by skill, or undefined when they are all of one skill (or none): groups with a live
 * run first, then by name; the runs whose skill is gone last.
 */
export function runsBySkill(
  runs: readonly RunView[],
  originSkill: (runDir: string) => string | undefined,
  nameOf: (skillPath: string) => string = skillDisplayName,
): SkillGroup[] | undefined {
  const byPath = new Map<string | undefined, RunView[]>();
  for (const run of runs) {
    const path = trainedSkillPath(run, originSkill(run.dir));
    byPath.set(path, [...(byPath.get(path) ?? []), run]);
  }
  if (byPath.size < 2) return undefined;
  const live = (g: SkillGroup): number => (g.runs.some((r) => r.live?.status === 'running') ? 0 : 1);
  return [...byPath]
    .map(([path, list]): SkillGroup => ({
      ...(path ? { skillPath: path } : {}),
      name: path ? nameOf(path) : 'Skill not found',
      runs: sortRuns(list),
    }))
    .sort(
      (a, b) =>
        Number(!a.skillPath) - Number(!b.skillPath) ||
        live(a) - live(b) ||
        a.name.localeCompare(b.name) ||
        (a.skillPath ?? '').localeCompare(b.skillPath ?? ''),
    );
}

/** The group's row id (stable across refreshes, so expansion survives). */
export function skillGroupId(g: Pick<SkillGroup, 'skillPath'>): string {
  return g.skillPath ? `skill:${g.skillPath}` : MISSING;
}

/** "3 runs · 1 training"; two skills of one name also say where each lives. */
export function skillGroupNode(g: SkillGroup, sameName = false): NodeSpec {
  const training = g.runs.filter((r) => statusText(r) === 'running').length;
  const parts = [`${g.runs.length} run${g.runs.length === 1 ? '' : 's'}`];
  if (training) parts.push(`${training} training`);
  if (sameName && g.skillPath) parts.push(dirname(g.skillPath));
  return {
    id: skillGroupId(g),
    kind: 'skillGroup',
    runId: '',
    label: g.name,
    description: parts.join(' · '),
    tooltip: g.skillPath
      ? `Runs that trained ${g.skillPath}`
      : 'Runs whose skill file is not on this machine any more (moved, renamed or deleted)',
    icon: { id: g.skillPath ? 'book' : 'question' },
    contextValue: g.skillPath ? TreeItemContext.skillGroup : TreeItemContext.message,
    collapsible: 'expanded',
    ...(g.skillPath ? { skillPath: g.skillPath } : {}),
  };
}

/** The group rows, with names shared by two skills told apart. */
export function skillGroupNodes(groups: readonly SkillGroup[]): NodeSpec[] {
  const count = new Map<string, number>();
  for (const g of groups) count.set(g.name, (count.get(g.name) ?? 0) + 1);
  return groups.map((g) => skillGroupNode(g, (count.get(g.name) ?? 0) > 1));
}
