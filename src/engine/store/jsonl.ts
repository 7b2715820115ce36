import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { withParentDir, writeFileAtomic } from './atomic';

/**
 * Read a JSONL file written line by line. A crash can leave a torn last line; it is dropped (and
 * the file rewritten without it) so a resumed run appends to a clean file.
 */
export function readJsonlTolerant<T>(path: string): T[] {
  if (!existsSync(path)) return [];
  const text = readFileSync(path, 'utf8');
  const rows: T[] = [];
  let torn = false;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      rows.push(JSON.parse(line) as T);
    } catch {
      torn = true;
    }
  }
  if (torn) writeFileAtomic(path, rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : ''));
  return rows;
}

export function appendJsonl(path: string, row: unknown): void {
  const line = JSON.stringify(row) + '\n';
  withParentDir(path, () => appendFileSync(path, line, 'utf8'));
}
