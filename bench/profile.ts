/**
 * Where the engine process spends its CPU, from a V8 CPU profile (the inspector's
 * `Profiler.stop` result): each sample goes to the category of the nearest frame on its stack
 * that has one, so a socket write under the OpenAI SDK counts as HTTP client and a rename under
 * writeFileAtomic counts as run-folder writes. Pure.
 */

export interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber?: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: CpuProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  /** µs since the previous sample (the first is since startTime). */
  timeDeltas: number[];
}

export const CPU_CATEGORIES = [
  'engine',
  'run folder writes',
  'response cache',
  'http client',
  'garbage collection',
  'bench harness',
  'runtime',
  'idle',
] as const;
export type CpuCategory = (typeof CPU_CATEGORIES)[number];

/** The category a frame names by itself, or undefined when its caller decides. */
export function frameCategory(frame: CpuProfileNode['callFrame']): CpuCategory | undefined {
  const url = frame.url.replace(/\\/g, '/');
  const fn = frame.functionName;
  if (fn === '(garbage collector)') return 'garbage collection';
  if (fn === '(idle)') return 'idle';
  if (fn === '(program)') return 'runtime';
  if (
    /\/node_modules\/(openai|@anthropic-ai|undici|agentkeepalive|form-data-encoder|formdata-node)\//.test(
      url,
    ) ||
    /^node:internal\/deps\/undici/.test(url) ||
    /^node:internal\/webstreams\//.test(url) ||
    url === 'node:net' ||
    url === 'node:_http_client' ||
    url === 'node:internal/stream_base_commons'
  )
    return 'http client';
  if (/\/src\/engine\/store\//.test(url)) return 'run folder writes';
  if (/\/src\/engine\/llm\/cache\.ts$/.test(url)) return 'response cache';
  if (/\/src\/engine\//.test(url) || /\/node_modules\/(zod|yaml|diff|csv-parse)\//.test(url)) return 'engine';
  // The fs-call counter only wraps the engine's own calls: its frames belong to whoever called them.
  if (/\/bench\/fsCount\.ts$/.test(url)) return undefined;
  if (/\/bench\//.test(url) || /\/test\/support\//.test(url)) return 'bench harness';
  return undefined;
}

export interface CategorizedSample {
  /** µs from the profile's startTime. */
  atUs: number;
  us: number;
  category: CpuCategory;
}

/** Every sample with its time and category. */
export function categorizeSamples(profile: CpuProfile): CategorizedSample[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map<number, CpuCategory>();
  const categoryOf = (id: number): CpuCategory => {
    const known = memo.get(id);
    if (known) return known;
    const path: number[] = [];
    let cur: number | undefined = id;
    let found: CpuCategory = 'runtime';
    while (cur !== undefined) {
      const m = memo.get(cur);
      if (m) {
        found = m;
        break;
      }
      path.push(cur);
      const c = frameCategory(byId.get(cur)!.callFrame);
      if (c) {
        found = c;
        break;
      }
      cur = parent.get(cur);
    }
    // Frames below the first categorized one inherit it; the categorized frame keeps its own.
    for (const p of path) memo.set(p, found);
    return found;
  };
  const out: CategorizedSample[] = [];
  let t = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    t += dt;
    out.push({ atUs: t, us: dt, category: categoryOf(profile.samples[i]) });
  }
  return out;
}

export type CategoryMs = Record<CpuCategory, number>;

export function emptyCategories(): CategoryMs {
  return Object.fromEntries(CPU_CATEGORIES.map((c) => [c, 0])) as CategoryMs;
}

/** Milliseconds per category over the samples whose time falls in [fromUs, toUs). */
export function categoryTotals(
  samples: readonly CategorizedSample[],
  fromUs = -Infinity,
  toUs = Infinity,
): CategoryMs {
  const out = emptyCategories();
  for (const s of samples) if (s.atUs >= fromUs && s.atUs < toUs) out[s.category] += s.us / 1000;
  return out;
}
