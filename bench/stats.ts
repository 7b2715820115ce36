/** Summaries over repetitions and small numeric helpers for the bench. Pure. */

export interface Spread {
  min: number;
  median: number;
  max: number;
  n: number;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export function spread(values: readonly number[]): Spread {
  if (values.length === 0) return { min: NaN, median: NaN, max: NaN, n: 0 };
  return { min: Math.min(...values), median: median(values), max: Math.max(...values), n: values.length };
}

/** Least-squares line through (x, y) points: slope, intercept and R². */
export function linearFit(points: ReadonlyArray<readonly [number, number]>): {
  slope: number;
  intercept: number;
  r2: number;
} {
  const n = points.length;
  if (n < 2) throw new RangeError('a line needs at least two points');
  let sx = 0;
  let sy = 0;
  for (const [x, y] of points) {
    sx += x;
    sy += y;
  }
  const mx = sx / n;
  const my = sy / n;
  let sxx = 0;
  let sxy = 0;
  let syy = 0;
  for (const [x, y] of points) {
    sxx += (x - mx) ** 2;
    sxy += (x - mx) * (y - my);
    syy += (y - my) ** 2;
  }
  if (sxx === 0) throw new RangeError('all x values are equal');
  const slope = sxy / sxx;
  const intercept = my - slope * mx;
  const r2 = syy === 0 ? 1 : (sxy * sxy) / (sxx * syy);
  return { slope, intercept, r2 };
}

/** `1.234` → `"1.23"`; NaN → `"–"`. */
export function fmt(n: number, digits = 0): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '–';
}

/** `min / median / max` with the given digits. */
export function fmtSpread(s: Spread, digits = 0, unit = ''): string {
  if (s.n === 0) return '–';
  if (s.n === 1 || s.min === s.max) return `${fmt(s.median, digits)}${unit}`;
  return `${fmt(s.min, digits)} / ${fmt(s.median, digits)} / ${fmt(s.max, digits)}${unit}`;
}

/** A fixed-width text table; numbers right-aligned, text left-aligned. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  // A column is numeric (right-aligned) when every cell starts like a number.
  const numeric = header.map((_, i) => rows.every((r) => /^[-+–]?\d|^–$|^$/.test(r[i] ?? '')));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (numeric[i] ? (c ?? '').padStart(widths[i]) : (c ?? '').padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
