import { SkillOptError } from '../errors';

/*
 * Marker strings of the protected blocks. They are part of the on-disk format shared with the Python
 * reference (skills trained there end with an empty SLOW_UPDATE block), so they must never change.
 */
export const SLOW_UPDATE_START = '<!-- SLOW_UPDATE_START -->';
export const SLOW_UPDATE_END = '<!-- SLOW_UPDATE_END -->';
export const APPENDIX_START = '<!-- APPENDIX_START -->';
export const APPENDIX_END = '<!-- APPENDIX_END -->';
export const APPENDIX_HEADING = '## Execution Notes Appendix';

export const ALL_MARKERS: readonly string[] = [
  SLOW_UPDATE_START,
  SLOW_UPDATE_END,
  APPENDIX_START,
  APPENDIX_END,
];

export type ProtectedKind = 'slow_update' | 'appendix';

/** Offsets are UTF-16 indices into the text; lines are 0-based. */
export interface ProtectedRegion {
  kind: ProtectedKind;
  /** Index of the start marker. */
  start: number;
  /** Exclusive end, just past the end marker. */
  end: number;
  /** Just past the start marker. */
  contentStart: number;
  /** Index of the end marker. */
  contentEnd: number;
  startLine: number;
  /** Line holding the end marker. */
  endLine: number;
}

/** A region without line numbers: what the edit engine needs, computed in one pass. */
export interface ProtectedSpan {
  kind: ProtectedKind;
  start: number;
  end: number;
  contentStart: number;
  contentEnd: number;
}

export interface MarkerHit {
  kind: ProtectedKind;
  role: 'start' | 'end';
  marker: string;
  pos: number;
}

const MARKER_TABLE: ReadonlyArray<{ marker: string; kind: ProtectedKind; role: 'start' | 'end' }> = [
  { marker: SLOW_UPDATE_START, kind: 'slow_update', role: 'start' },
  { marker: SLOW_UPDATE_END, kind: 'slow_update', role: 'end' },
  { marker: APPENDIX_START, kind: 'appendix', role: 'start' },
  { marker: APPENDIX_END, kind: 'appendix', role: 'end' },
];

// Every marker begins with this prefix, so one indexOf pass finds them all.
const MARKER_PREFIX = '<!-- ';

const KIND_LABEL: Record<ProtectedKind, string> = {
  slow_update: 'slow-update',
  appendix: 'appendix',
};

const START_OF: Record<ProtectedKind, string> = { slow_update: SLOW_UPDATE_START, appendix: APPENDIX_START };
const END_OF: Record<ProtectedKind, string> = { slow_update: SLOW_UPDATE_END, appendix: APPENDIX_END };

/** Every marker occurrence in document order (markers cannot overlap each other). */
export function scanMarkers(text: string): MarkerHit[] {
  const hits: MarkerHit[] = [];
  let from = 0;
  for (;;) {
    const i = text.indexOf(MARKER_PREFIX, from);
    if (i === -1) break;
    const entry = MARKER_TABLE.find((m) => text.startsWith(m.marker, i));
    if (entry) {
      hits.push({ kind: entry.kind, role: entry.role, marker: entry.marker, pos: i });
      from = i + entry.marker.length;
    } else {
      from = i + 1;
    }
  }
  return hits;
}

/**
 * Pairs each start marker with the next end marker of its kind. A repeated start inside an open
 * block belongs to that block; unpaired markers protect nothing (checkSkillMarkers reports them).
 */
export function spansFromHits(hits: readonly MarkerHit[]): ProtectedSpan[] {
  const open: Partial<Record<ProtectedKind, MarkerHit>> = {};
  const spans: ProtectedSpan[] = [];
  for (const hit of hits) {
    const current = open[hit.kind];
    if (hit.role === 'start') {
      if (!current) open[hit.kind] = hit;
    } else if (current) {
      spans.push({
        kind: hit.kind,
        start: current.pos,
        end: hit.pos + hit.marker.length,
        contentStart: current.pos + current.marker.length,
        contentEnd: hit.pos,
      });
      open[hit.kind] = undefined;
    }
  }
  return spans.sort((a, b) => a.start - b.start);
}

export function protectedSpans(text: string): ProtectedSpan[] {
  return spansFromHits(scanMarkers(text));
}

/** 0-based line of each offset, keyed by offset. */
function linesOf(text: string, offsets: readonly number[]): Map<number, number> {
  const out = new Map<number, number>();
  let line = 0;
  let cursor = 0;
  for (const offset of [...offsets].sort((x, y) => x - y)) {
    for (;;) {
      const nl = text.indexOf('\n', cursor);
      if (nl === -1 || nl >= offset) break;
      line++;
      cursor = nl + 1;
    }
    out.set(offset, line);
  }
  return out;
}

function withLines(text: string, spans: readonly ProtectedSpan[]): ProtectedRegion[] {
  const lines = linesOf(
    text,
    spans.flatMap((s) => [s.start, s.end - 1]),
  );
  return spans.map((s) => ({ ...s, startLine: lines.get(s.start) ?? 0, endLine: lines.get(s.end - 1) ?? 0 }));
}

/** The protected blocks of a skill, in document order. Never throws; malformed markers are ignored. */
export function findProtectedRegions(text: string): ProtectedRegion[] {
  return withLines(text, protectedSpans(text));
}

function lineNumber(text: string, offset: number): number {
  return (linesOf(text, [offset]).get(offset) ?? 0) + 1;
}

/**
 * Validates the protected-block markers of a skill a person wrote, before a run starts. Returns the
 * regions of a clean skill; otherwise throws one SkillOptError naming the 1-based line to fix.
 */
export function checkSkillMarkers(text: string, file?: string): ProtectedRegion[] {
  const hits = scanMarkers(text);
  const open: Partial<Record<ProtectedKind, MarkerHit>> = {};
  const firstStart: Partial<Record<ProtectedKind, MarkerHit>> = {};
  const fail = (hit: MarkerHit, problem: string, fix: string): never => {
    throw new SkillOptError('skill', problem, { file, line: lineNumber(text, hit.pos), fix });
  };
  for (const hit of hits) {
    const label = KIND_LABEL[hit.kind];
    if (hit.role === 'start') {
      const earlier = firstStart[hit.kind];
      if (earlier) {
        fail(
          hit,
          `second ${hit.marker} marker (the ${label} block already starts on line ${lineNumber(text, earlier.pos)})`,
          `keep a single ${label} block: delete this marker or merge the two blocks`,
        );
      }
      const other: ProtectedKind = hit.kind === 'slow_update' ? 'appendix' : 'slow_update';
      const otherOpen = open[other];
      if (otherOpen) {
        fail(
          hit,
          `${hit.marker} starts inside the ${KIND_LABEL[other]} block opened on line ${lineNumber(text, otherOpen.pos)}`,
          `close the ${KIND_LABEL[other]} block with ${END_OF[other]} before starting the ${label} block; blocks must not overlap`,
        );
      }
      firstStart[hit.kind] = hit;
      open[hit.kind] = hit;
    } else if (open[hit.kind]) {
      open[hit.kind] = undefined;
    } else {
      fail(
        hit,
        `${hit.marker} has no ${START_OF[hit.kind]} before it`,
        `put ${START_OF[hit.kind]} on a line before this one, or delete this stray end marker`,
      );
    }
  }
  for (const kind of ['slow_update', 'appendix'] as const) {
    const unclosed = open[kind];
    if (unclosed) {
      fail(
        unclosed,
        `${unclosed.marker} is never closed`,
        `add ${END_OF[kind]} on its own line after the ${KIND_LABEL[kind]} block`,
      );
    }
  }
  return withLines(text, spansFromHits(hits));
}

/** Deletes every marker string; repeats because removing one can join fragments into another. */
export function stripMarkers(content: string): string {
  let out = content;
  for (;;) {
    let next = out;
    for (const marker of ALL_MARKERS) next = next.split(marker).join('');
    if (next === out) return out;
    out = next;
  }
}

export function containsMarker(text: string): boolean {
  return ALL_MARKERS.some((m) => text.includes(m));
}

// Python's str.strip()/rstrip() whitespace set (str.isspace), so trimming matches the reference byte
// for byte; JavaScript's trim() differs on U+001C–U+001F, U+0085 and U+FEFF.
function isPyWs(code: number): boolean {
  return (
    (code >= 0x09 && code <= 0x0d) ||
    (code >= 0x1c && code <= 0x20) ||
    code === 0x85 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000
  );
}

export function pyRstrip(s: string): string {
  // A backwards scan avoids the regex engine's quadratic behaviour on long whitespace runs.
  let end = s.length;
  while (end > 0 && isPyWs(s.charCodeAt(end - 1))) end--;
  return end === s.length ? s : s.slice(0, end);
}

export function pyStrip(s: string): string {
  let start = 0;
  while (start < s.length && isPyWs(s.charCodeAt(start))) start++;
  return pyRstrip(start === 0 ? s : s.slice(start));
}
