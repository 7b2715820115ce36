/**
 * Applying a run's best skill folder to the user's skill folder: which files differ. Both the
 * extension's Apply Best and tests use it; the writing itself is the caller's (a WorkspaceEdit there).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface FileToApply {
  /** Relative to the skill folder, `/`-separated. */
  path: string;
  status: 'added' | 'changed';
  bytes: Buffer;
}

/** The files of `bestDir` that `skillDir` lacks or holds with other bytes (SKILL.md first). */
export function filesToApply(bestDir: string, skillDir: string): FileToApply[] {
  const out: FileToApply[] = [];
  for (const rel of readdirSync(bestDir, { recursive: true, encoding: 'utf8' })) {
    const from = join(bestDir, rel);
    if (!statSync(from).isFile()) continue;
    const path = rel.replace(/\\/g, '/');
    const to = join(skillDir, rel);
    const bytes = readFileSync(from);
    if (!existsSync(to)) out.push({ path, status: 'added', bytes });
    else if (!readFileSync(to).equals(bytes)) out.push({ path, status: 'changed', bytes });
  }
  return out.sort((a, b) =>
    a.path === 'SKILL.md' ? -1 : b.path === 'SKILL.md' ? 1 : a.path.localeCompare(b.path),
  );
}
