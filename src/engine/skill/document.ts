import { createHash } from 'node:crypto';
import {
  APPENDIX_END,
  APPENDIX_HEADING,
  APPENDIX_START,
  SLOW_UPDATE_END,
  SLOW_UPDATE_START,
  protectedSpans,
  pyRstrip,
  pyStrip,
  stripMarkers,
} from './markers';
import { usesCrlf } from './lineEndings';
import { mapSkillBody, skillBody } from './package/text';

export {
  ALL_MARKERS,
  APPENDIX_END,
  APPENDIX_HEADING,
  APPENDIX_START,
  SLOW_UPDATE_END,
  SLOW_UPDATE_START,
  checkSkillMarkers,
  findProtectedRegions,
  stripMarkers,
  type ProtectedKind,
  type ProtectedRegion,
} from './markers';

/** The reference's `candidate_hash`: first 16 hex characters of SHA-256 over the UTF-8 text. */
export function skillHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
}

// ── slow-update block (semantics of the reference's slow_update helpers) ──────────────────────────

export function hasSlowUpdate(skill: string): boolean {
  return skill.includes(SLOW_UPDATE_START) && skill.includes(SLOW_UPDATE_END);
}

/** Adds an empty block at the end unless both markers are already present. */
export function injectEmptySlowUpdate(skill: string): string {
  if (hasSlowUpdate(skill)) return skill;
  return mapSkillBody(skill, (body) => `${pyRstrip(body)}\n\n${SLOW_UPDATE_START}\n${SLOW_UPDATE_END}\n`);
}

/** Stripped text between the first start marker and the first end marker; "" when either is missing. */
export function extractSlowUpdate(skill: string): string {
  const start = skill.indexOf(SLOW_UPDATE_START);
  const end = skill.indexOf(SLOW_UPDATE_END);
  if (start === -1 || end === -1) return '';
  const inner = start + SLOW_UPDATE_START.length;
  return end > inner ? pyStrip(skill.slice(inner, end)) : '';
}

/**
 * Removes every block of one kind: each start with everything up to the next end marker, then
 * orphan starts and stray ends. Runs of 3+ newlines (anywhere) become 2 and the tail is
 * right-stripped, as the reference does.
 */
function stripAllBlocks(skill: string, startMarker: string, endMarker: string): string {
  const parts: string[] = [];
  let cursor = 0;
  for (;;) {
    const start = skill.indexOf(startMarker, cursor);
    if (start === -1) break;
    const end = skill.indexOf(endMarker, start);
    parts.push(skill.slice(cursor, start));
    if (end === -1) {
      // The reference drops only the first orphan start; every later start is an orphan too, so we
      // drop them all rather than leave a marker that would pair with the block appended next.
      cursor = start + startMarker.length;
      continue;
    }
    cursor = end + endMarker.length;
  }
  parts.push(skill.slice(cursor));
  const without = parts.join('').split(endMarker).join('');
  return pyRstrip(without.replace(/\n{3,}/g, '\n\n'));
}

/** Replaces all slow-update blocks with exactly one, holding `content` (stripped), at the end. */
export function replaceSlowUpdate(skill: string, content: string): string {
  return mapSkillBody(skill, (body) => {
    const rest = stripAllBlocks(body, SLOW_UPDATE_START, SLOW_UPDATE_END);
    return `${rest}\n\n${SLOW_UPDATE_START}\n${pyStrip(content)}\n${SLOW_UPDATE_END}\n`;
  });
}

// ── skill-aware appendix block ───────────────────────────────────────────────────────────────────

export function hasAppendix(skill: string): boolean {
  return skill.includes(APPENDIX_START) && skill.includes(APPENDIX_END);
}

const BULLET = /^[-*]\s+/;

/** One note per line: markers removed, whitespace collapsed, a leading bullet dropped. */
function cleanNote(note: string): string {
  return stripMarkers(note).replace(/\s+/g, ' ').trim().replace(BULLET, '').trim();
}

function renderAppendix(notes: readonly string[]): string {
  const bullets = notes.map(cleanNote).filter((n) => n.length > 0);
  const body = bullets.map((n) => `- ${n}\n`).join('');
  return `${APPENDIX_START}\n${APPENDIX_HEADING}\n${body}${APPENDIX_END}`;
}

/** Adds an empty appendix (heading only) at the end unless both markers are already present. */
export function injectEmptyAppendix(skill: string): string {
  if (hasAppendix(skill)) return skill;
  return mapSkillBody(skill, (body) => `${pyRstrip(body)}\n\n${renderAppendix([])}\n`);
}

/** The notes of the first appendix block, one per bullet; wrapped lines join their bullet. */
export function extractAppendixNotes(skill: string): string[] {
  const block = protectedSpans(skill).find((s) => s.kind === 'appendix');
  if (!block) return [];
  const notes: string[] = [];
  for (const raw of skill.slice(block.contentStart, block.contentEnd).split('\n')) {
    const line = raw.trim();
    if (!line || line === APPENDIX_HEADING) continue;
    if (BULLET.test(line)) notes.push(line.replace(BULLET, '').trim());
    else if (notes.length > 0) notes.push(`${notes.pop() ?? ''} ${line}`);
    else notes.push(line);
  }
  return notes;
}

/**
 * Writes `notes` as the appendix. A single well-formed block is rewritten in place so the rest of
 * the document stays byte-identical; otherwise every appendix marker is removed and one block is
 * appended at the end.
 */
export function replaceAppendix(skill: string, notes: readonly string[]): string {
  const blocks = protectedSpans(skill).filter((s) => s.kind === 'appendix');
  const markerCount = skill.split(APPENDIX_START).length - 1 + (skill.split(APPENDIX_END).length - 1);
  const only = blocks.length === 1 ? blocks[0] : undefined;
  if (only && markerCount === 2) {
    const block = renderAppendix(notes);
    return (
      skill.slice(0, only.start) +
      (usesCrlf(skillBody(skill)) ? block.replace(/\n/g, '\r\n') : block) +
      skill.slice(only.end)
    );
  }
  return mapSkillBody(
    skill,
    (body) => `${stripAllBlocks(body, APPENDIX_START, APPENDIX_END)}\n\n${renderAppendix(notes)}\n`,
  );
}

/** Canonical form for de-duplicating notes: whitespace collapsed, trailing punctuation dropped, case-folded. */
export function canonicalNote(note: string): string {
  return note
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[ .;:,_-]+$/, '')
    .toLowerCase();
}

/** Existing notes followed by new ones, keeping the first of each canonical duplicate. */
export function mergeAppendixNotes(existing: readonly string[], added: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const note of [...existing, ...added]) {
    const cleaned = cleanNote(note);
    const key = canonicalNote(cleaned);
    if (!key || seen.has(key)) continue;
    seen.add(key);
    out.push(cleaned);
  }
  return out;
}
