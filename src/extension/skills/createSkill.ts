/**
 * "New Skill…" from the Skills view: where (which agent will load it), its name and description,
 * then `<location>/<name>/SKILL.md` with that front matter, opened for writing. The name follows
 * the Agent Skills rules the hosts enforce: it must equal the folder's name, or VS Code skips it.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import { SKILL_FILE_NAME } from '../../engine/skill/lint';
import { HOST_LABEL, PROJECT_SKILL_LOCATIONS, type SkillHost } from './discovery';
import { descriptionProblem, nameProblem, skillTemplate } from './skillTemplate';

export async function createSkill(ctx: Ctx): Promise<vscode.Uri | undefined> {
  const roots = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file');
  if (roots.length === 0) {
    void vscode.window.showInformationMessage('SkillOpt: open a folder to create a skill in it.');
    return undefined;
  }
  type Item = vscode.QuickPickItem & { dir: string; host: SkillHost };
  const items: Item[] = roots.flatMap((root) =>
    PROJECT_SKILL_LOCATIONS.map((loc) => ({
      label: loc.dir,
      description: HOST_LABEL[loc.host],
      ...(roots.length > 1 ? { detail: root.name } : {}),
      dir: join(root.uri.fsPath, loc.dir),
      host: loc.host,
    })),
  );
  const where = await vscode.window.showQuickPick(items, {
    title: 'SkillOpt: New Skill (1/3)',
    placeHolder: 'Where to keep it: the agent that loads skills from that folder',
  });
  if (!where) return undefined;
  const name = await vscode.window.showInputBox({
    title: 'SkillOpt: New Skill (2/3)',
    prompt: 'Name (also the folder name)',
    placeHolder: 'e.g. release-notes',
    validateInput: (v) =>
      nameProblem(v) ?? (existsSync(join(where.dir, v)) ? `${where.label}/${v} already exists.` : undefined),
  });
  if (!name) return undefined;
  const description = await vscode.window.showInputBox({
    title: 'SkillOpt: New Skill (3/3)',
    prompt: 'Description: what it does and when the agent should use it',
    validateInput: descriptionProblem,
  });
  if (!description) return undefined;
  const folder = join(where.dir, name);
  const file = join(folder, SKILL_FILE_NAME);
  mkdirSync(folder, { recursive: true });
  writeFileSync(file, skillTemplate(name, description.trim()), { flag: 'wx' });
  ctx.log.info(`[skills] created ${relative(roots[0]?.uri.fsPath ?? '', file)}`);
  const uri = vscode.Uri.file(file);
  await vscode.window.showTextDocument(uri);
  return uri;
}
