import { readFileSync } from 'node:fs';

/** A JSON file's top-level object; undefined when it is missing, not JSON or not an object (read as none). */
export function readJsonObject(path: string): Record<string, unknown> | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw)
    ? (raw as Record<string, unknown>)
    : undefined;
}
