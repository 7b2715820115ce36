import { payloadKey, type UpdateMode } from '../prompts/modes';
import { splitPackage } from '../skill/package/text';
import type { Item } from './aggregate';
import type { RawPatch } from './reflect';

export interface Provenance {
  minibatches: string[];
  trajectory_ids: string[];
}

/** Where a kept edit came from: `provenance.json`, one record per edit applied in an accepted step. */
export interface ProvenanceRecord extends Provenance {
  step: number;
  epoch: number;
  edit_id: string;
  op: string;
  target?: string;
  content?: string;
  /** A skill folder's file the edit changed, when it is not SKILL.md. */
  file?: string;
  source_type?: string;
  support_count?: number;
  action: string;
  score_before: number;
  score_after: number;
}

function words(text: string): Set<string> {
  return new Set(
    text
      .toLowerCase()
      .replace(/[^a-z0-9\s]/g, ' ')
      .split(/\s+/)
      .filter((w) => w.length > 2),
  );
}

function similarity(a: string, b: string): number {
  const wa = words(a);
  const wb = words(b);
  if (!wa.size || !wb.size) return 0;
  let inter = 0;
  for (const w of wa) if (wb.has(w)) inter++;
  return inter / Math.min(wa.size, wb.size);
}

const text = (i: Item): string =>
  [i.content, i.instruction, i.title, i.target].filter((v): v is string => typeof v === 'string').join(' ');

/**
 * Merges are written by a model and may drop the `provenance` we stamp on analyst items, so it is
 * recovered by matching each merged item to the analyst items it most resembles (the evidence of
 * every analyst item that says nearly the same thing). Unmatched items get every minibatch of
 * their source type, which is honest: the merge drew on all of them.
 */
export function recoverProvenance(
  items: readonly Item[],
  raw: readonly RawPatch[],
  mode: UpdateMode,
): Provenance[] {
  const key = payloadKey(mode);
  const sources = raw.flatMap((p) => {
    const list = Array.isArray(p.patch[key]) ? (p.patch[key] as Item[]) : [];
    return list.map((item) => ({ item, patch: p }));
  });
  return items.map((item) => {
    const stamped = item.provenance as (Partial<Provenance> & { minibatch?: string }) | undefined;
    const matches = sources.filter((s) => similarity(text(s.item), text(item)) >= 0.6);
    const pool = matches.length
      ? matches.map((m) => m.patch)
      : raw.filter((p) => p.source_type === (item.source_type === 'success' ? 'success' : 'failure'));
    const minibatches = new Set<string>();
    const ids = new Set<string>();
    if (stamped?.minibatch) minibatches.add(stamped.minibatch);
    for (const id of stamped?.trajectory_ids ?? []) ids.add(id);
    for (const p of pool) {
      if (p.minibatch) minibatches.add(p.minibatch);
      for (const id of p.trajectory_ids ?? []) ids.add(id);
    }
    return { minibatches: [...minibatches].sort(), trajectory_ids: [...ids].sort() };
  });
}

export interface LineOrigin {
  /** 0-based line in the skill (in `file`, for a skill folder's other files). */
  line: number;
  file?: string;
  text: string;
  origin: ProvenanceRecord;
}

/** For each line of a skill, the latest kept edit whose content contains it. Lines from the initial skill have none. */
export function lineOrigins(skill: string, records: readonly ProvenanceRecord[]): LineOrigin[] {
  const out: LineOrigin[] = [];
  skill.split('\n').forEach((raw, line) => {
    const origin = originOfLine(raw, records);
    if (origin) out.push({ line, text: raw.trim(), origin });
  });
  return out;
}

/**
 * `lineOrigins` for every file of a skill folder: SKILL.md's lines from the edits of SKILL.md, each
 * other file's from the edits that named it. A single-file skill gives exactly `lineOrigins`.
 */
export function packageLineOrigins(skill: string, records: readonly ProvenanceRecord[]): LineOrigin[] {
  const pkg = splitPackage(skill);
  return [
    ...lineOrigins(
      pkg.skill,
      records.filter((r) => r.file === undefined),
    ),
    ...pkg.files.flatMap((f) =>
      lineOrigins(
        f.text,
        records.filter((r) => r.file === f.path),
      ).map((o) => ({ ...o, file: f.path })),
    ),
  ];
}

/** The newest record whose content holds this line (a later step is the line's last author). */
export function originOfLine(
  line: string,
  records: readonly ProvenanceRecord[],
): ProvenanceRecord | undefined {
  const t = line.trim();
  if (t.length < 4) return undefined;
  for (let i = records.length - 1; i >= 0; i--) {
    const r = records[i];
    if (r.content && r.content.split('\n').some((c) => c.trim() === t)) return r;
  }
  return undefined;
}
