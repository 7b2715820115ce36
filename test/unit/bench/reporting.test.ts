import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BENCH_SPLIT_SIZES,
  generateBenchTasks,
  seededRandom,
  toJsonl,
  fixtureDir,
} from '../../../bench/fixtures/generate';
import {
  sourceGroup,
  summarizeMetafile,
  vscodeFigures,
  vscodeUnavailable,
  type Metafile,
} from '../../../bench/footprint';
import { countFsCalls, countIn } from '../../../bench/fsCount';
import { categorizeSamples, categoryTotals, frameCategory, type CpuProfile } from '../../../bench/profile';
import { renderReport, verdictOf, type BenchResult } from '../../../bench/report';
import { syntheticHistory } from '../../../bench/webviewRender';
import type { SpeedResult } from '../../../bench/speed';
import type { OverheadResult } from '../../../bench/overhead';
import { spread } from '../../../bench/stats';
import { capitalOf } from '../../../src/engine/llm/sim/habits';

describe('bench CPU profile categories', () => {
  const frame = (functionName: string, url: string): { functionName: string; url: string } => ({
    functionName,
    url,
  });

  it('names a category from the frame itself where it can', () => {
    assert.equal(
      frameCategory(frame('makeRequest', 'file:///w/node_modules/openai/client.js')),
      'http client',
    );
    assert.equal(frameCategory(frame('fetch', 'node:internal/deps/undici/undici')), 'http client');
    assert.equal(
      frameCategory(frame('writeFileAtomic', '/w/src/engine/store/atomic.ts')),
      'run folder writes',
    );
    assert.equal(frameCategory(frame('get', '/w/src/engine/llm/cache.ts')), 'response cache');
    assert.equal(frameCategory(frame('parse', '/w/node_modules/zod/v4/core.js')), 'engine');
    assert.equal(frameCategory(frame('runStep', '/w/src/engine/train/trainer.ts')), 'engine');
    assert.equal(frameCategory(frame('chat', '/w/bench/harness.ts')), 'bench harness');
    assert.equal(frameCategory(frame('(garbage collector)', '')), 'garbage collection');
    assert.equal(frameCategory(frame('writeFileUtf8', '')), undefined);
    assert.equal(frameCategory(frame('emit', 'node:events')), undefined);
    // The fs-call counter's wrappers belong to whoever called them.
    assert.equal(frameCategory(frame('wrapped', '/w/bench/fsCount.ts')), undefined);
  });

  it('gives each sample the category of its nearest categorized frame', () => {
    // root → runStep (engine) → writeFileAtomic (store) → writeFileUtf8 (native)
    //                         → makeRequest (openai) → emit (node:events)
    // root → runMicrotasks (native)
    const profile: CpuProfile = {
      startTime: 1_000,
      endTime: 9_000,
      nodes: [
        { id: 1, callFrame: frame('(root)', ''), children: [2, 6] },
        { id: 2, callFrame: frame('runStep', '/w/src/engine/train/trainer.ts'), children: [3, 4] },
        { id: 3, callFrame: frame('writeFileAtomic', '/w/src/engine/store/atomic.ts'), children: [7] },
        { id: 4, callFrame: frame('makeRequest', '/w/node_modules/openai/client.js'), children: [5] },
        { id: 5, callFrame: frame('emit', 'node:events') },
        { id: 6, callFrame: frame('runMicrotasks', '') },
        { id: 7, callFrame: frame('writeFileUtf8', '') },
      ],
      samples: [7, 5, 2, 6, 7],
      timeDeltas: [1000, 2000, 500, 250, 1000],
    };
    const samples = categorizeSamples(profile);
    assert.deepEqual(
      samples.map((s) => [s.atUs, s.category]),
      [
        [1000, 'run folder writes'],
        [3000, 'http client'],
        [3500, 'engine'],
        [3750, 'runtime'],
        [4750, 'run folder writes'],
      ],
    );
    const all = categoryTotals(samples);
    assert.deepEqual(
      [all['run folder writes'], all['http client'], all.engine, all.runtime, all.idle],
      [2, 2, 0.5, 0.25, 0],
    );
    const window = categoryTotals(samples, 2000, 4000);
    assert.deepEqual([window['http client'], window.engine, window['run folder writes']], [2, 0.5, 0]);
  });
});

describe('bench bundle footprint', () => {
  it('groups bundle inputs by package or source folder', () => {
    assert.equal(sourceGroup('node_modules/zod/v4/core/core.js'), 'zod');
    assert.equal(sourceGroup('node_modules/@anthropic-ai/sdk/index.js'), '@anthropic-ai/sdk');
    assert.equal(sourceGroup('../node_modules/.pnpm/x/node_modules/yaml/dist/a.js'), 'yaml');
    assert.equal(sourceGroup('src/engine/llm/client.ts'), 'src/engine');
    assert.equal(sourceGroup('esbuild.mjs'), 'esbuild.mjs');
  });

  it('summarises the JavaScript output of a metafile', () => {
    const meta: Metafile = {
      inputs: {},
      outputs: {
        'dist/cli.js.map': { bytes: 9000, inputs: {} },
        'dist/cli.js': {
          bytes: 5000,
          inputs: {
            'src/engine/a.ts': { bytesInOutput: 1000 },
            'src/engine/b.ts': { bytesInOutput: 500 },
            'src/cli/main.ts': { bytesInOutput: 300 },
            'node_modules/zod/index.js': { bytesInOutput: 3000 },
          },
        },
      },
    };
    assert.deepEqual(summarizeMetafile('cli', meta, 2), {
      entry: 'cli',
      output: 'dist/cli.js',
      bytes: 5000,
      inputs: 4,
      largest: [
        { source: 'zod', bytes: 3000 },
        { source: 'src/engine', bytes: 1500 },
      ],
    });
    assert.throws(() => summarizeMetafile('x', { inputs: {}, outputs: {} }), /no \.js output/);
  });

  it('says why VS Code timings cannot be measured', () => {
    assert.match(
      vscodeUnavailable(() => false)!,
      /no extension entry point/,
    );
    assert.match(
      vscodeUnavailable((p) => p !== 'test/integration/harness/host.ts')!,
      /no VS Code harness/,
    );
    assert.equal(
      vscodeUnavailable(() => true),
      undefined,
    );
  });

  it('reports each VS Code figure as measured or with its reason', () => {
    const none = vscodeFigures(undefined, 'skipped', { error: 'no Chromium' });
    assert.deepEqual(
      none.map((f) => [f.what, f.measured, f.reason]),
      [
        ['extension activation', false, 'skipped'],
        ['review decorations on a 2,000-line skill', false, 'skipped'],
        ['gate-history webview render of a 1,000-step run', false, 'no Chromium'],
      ],
    );
    const some = vscodeFigures(
      { activationMs: spread([40, 50, 60]), decorationsMs: spread([]) },
      'session failed',
      { ms: spread([300, 320]) },
    );
    assert.deepEqual(some[0], { what: 'extension activation', measured: true, ms: spread([40, 50, 60]) });
    assert.deepEqual([some[1].measured, some[1].reason], [false, 'session failed']);
    assert.deepEqual(some[2], {
      what: 'gate-history webview render of a 1,000-step run',
      measured: true,
      ms: spread([300, 320]),
    });
  });

  it('builds a 1,000-step history for the webview with every kind of row', () => {
    const h = syntheticHistory(1000);
    const steps = h.steps.filter((r) => r.origin === 'step');
    assert.equal(steps.length, 1000);
    assert.equal(h.steps.filter((r) => r.origin === 'slow_update').length, 40);
    assert.ok(steps.some((r) => r.action === 'reject') && steps.some((r) => r.action.startsWith('accept')));
    assert.deepEqual(syntheticHistory(1000), h, 'deterministic');
  });
});

describe('bench task fixture', () => {
  it('is deterministic and the checked-in files are exactly what the generator writes', () => {
    const a = generateBenchTasks();
    assert.deepEqual(generateBenchTasks(), a);
    for (const name of ['train', 'val', 'test'] as const) {
      assert.equal(a[name].length, BENCH_SPLIT_SIZES[name]);
      assert.equal(readFileSync(join(fixtureDir, 'tasks', name, 'items.jsonl'), 'utf8'), toJsonl(a[name]));
    }
    assert.notDeepEqual(generateBenchTasks(8), a);
  });

  it('has distinct questions and answers the scripted target can compute', () => {
    const { train, val, test } = generateBenchTasks();
    const all = [...train, ...val, ...test];
    assert.equal(new Set(all.map((t) => t.question)).size, all.length);
    assert.equal(new Set(all.map((t) => t.id)).size, all.length);
    assert.deepEqual([...new Set(all.map((t) => t.task_type))].sort(), [
      'capital',
      'date',
      'distance',
      'money',
      'name',
    ]);
    for (const t of all) {
      if (t.task_type === 'capital') {
        const country = /capital of ([^?]+)\?/.exec(t.question)![1];
        assert.equal(t.answer, capitalOf[country]);
      }
      if (t.task_type === 'date') assert.match(t.answer, /^\d{4}-\d{2}-\d{2}$/);
      if (t.task_type === 'money') assert.match(t.answer, /^\$\d+\.\d{2}$/);
      if (t.task_type === 'distance') {
        const miles = Number(/Convert ([\d.]+) miles/.exec(t.question)![1]);
        assert.equal(t.answer, `${(miles * 1.609344).toFixed(2)} km`);
      }
      if (t.task_type === 'name') assert.match(t.answer, /^[A-Z][a-z]+, [A-Z][a-z]+$/);
    }
  });

  it('draws from a seeded generator', () => {
    const r = seededRandom(7);
    const first = [r(), r(), r()];
    const again = seededRandom(7);
    assert.deepEqual([again(), again(), again()], first);
    assert.ok(first.every((x) => x >= 0 && x < 1));
  });
});

describe('bench verdict', () => {
  const speed = (ratio: number): SpeedResult => ({
    settings: { latencyMs: 300, jitterMs: 0, concurrency: 16, reps: 3 },
    reps: [],
    ratio: spread([ratio - 0.01, ratio, ratio + 0.01]),
    engineOrderRatio: spread([ratio]),
    wallMs: spread([26_000]),
    boundMs: spread([20_000]),
    overheadPerStepMs: spread([700]),
    unusedOverlapMs: spread([1_200]),
    byStage: [
      {
        stage: 'rollout',
        wallMs: spread([5800]),
        calls: spread([189]),
        boundMs: spread([4300]),
        overheadMs: spread([1500]),
      },
      {
        stage: 'evaluate',
        wallMs: spread([6700]),
        calls: spread([240]),
        boundMs: spread([5400]),
        overheadMs: spread([1300]),
      },
      {
        stage: 'aggregate',
        wallMs: spread([2900]),
        calls: spread([11]),
        boundMs: spread([2850]),
        overheadMs: spread([50]),
      },
    ],
  });

  it('names the stages that hold the ratio back', () => {
    const v = verdictOf(speed(1.3), undefined);
    assert.deepEqual(v.ratio, { median: 1.3, target: 1.1, met: false });
    assert.equal(
      v.notes[0],
      'wall − bound = 6.00 s: engine time between and around calls 2.85 s, overlap the algorithm allows but the engine does not use 1.20 s.',
    );
    assert.equal(
      v.notes[1],
      'Largest engine time by stage: rollout 1.50 s over 189 calls; evaluate 1.30 s over 240 calls; aggregate 0.05 s over 11 calls.',
    );
    const met = verdictOf(speed(1.05), undefined);
    assert.equal(met.ratio?.met, true);
    // The split of the gap is reported either way.
    assert.equal(met.notes.length, 2);
  });

  it("judges overhead on the engine's own profiled CPU and explains the rest", () => {
    const overhead: OverheadResult = {
      reps: [],
      cpuPerStepMs: spread([250]),
      wallPerStepMs: spread([300]),
      runCpuPerStepMs: spread([350]),
      callsPerStep: spread([80]),
      profile: {
        share: {
          engine: 0.15,
          'run folder writes': 0.14,
          'response cache': 0.04,
          'http client': 0.48,
          'garbage collection': 0.045,
          'bench harness': 0.0025,
          runtime: 0.055,
          idle: 0,
        },
        perStepMs: {
          engine: 30,
          'run folder writes': 28,
          'response cache': 8,
          'http client': 96,
          'garbage collection': 9,
          'bench harness': 0.5,
          runtime: 11,
          idle: 0,
        },
        engineOwnPerStepMs: 66,
        sampledCpuPerStepMs: 310,
      },
      fsCallsPerStep: { mkdirSync: 256, writeFileSync: 176, renameSync: 176 },
      clientTiers: [
        { name: 'node:http', what: '', cpuPerCallMs: spread([0.37]) },
        { name: 'engine backend', what: '', cpuPerCallMs: spread([1.58]) },
        { name: 'engine client', what: '', cpuPerCallMs: spread([1.88]) },
      ],
    };
    const v = verdictOf(undefined, overhead);
    assert.deepEqual(v.overhead, {
      median: 66,
      target: 50,
      met: false,
      measure: "engine's own CPU per step",
    });
    assert.deepEqual(v.notes, [
      'CPU per step at zero latency: http client 96 ms, engine 30 ms, run folder writes 28 ms, runtime 11 ms, garbage collection 9 ms, response cache 8 ms.',
      "The run folder and cache cost 608 file-system calls per step (mkdirSync 256, writeFileSync 176, renameSync 176), all on the engine's one thread.",
      'One target call costs this process 1.88 ms CPU through the engine client, 1.58 ms of it in the OpenAI backend (SDK + fetch); a bare node:http call costs 0.37 ms.',
    ]);
    const text = renderReport({
      schema: 1,
      startedAt: '2026-01-01T00:00:00.000Z',
      durationS: 12,
      command: 'npm run bench --',
      quick: false,
      machine: {
        platform: 'linux',
        release: '6',
        arch: 'x64',
        cpuModel: 'CPU',
        cpus: 2,
        memoryGiB: 8,
        freeMemoryGiB: 4,
        loadAverage: 0.5,
        node: 'v20',
        v8: '11',
        commit: 'abc1234',
        uncommittedFiles: 0,
        writeRenameUs: 90,
      },
      server: { latencyMs: 300, jitterMs: 0, concurrency: 16, reps: 3 },
      speed: speed(1.3),
      overhead,
      batch: {
        pricedAs: 'gpt-4.1-mini (openai: $0.4 / $1.6 per M tokens)',
        rows: [
          {
            split: 'test',
            items: 40,
            promptTokens: 6159,
            completionTokens: 818,
            syncDollars: 0.0038,
            batchDollars: 0.0019,
            batches: 1,
            sameScores: true,
          },
        ],
      },
      verdict: verdictOf(speed(1.3), overhead),
    } satisfies BenchResult);
    assert.match(text, /^test\s+40\s+6159 \/ 818\s+\$0\.0038\s+\$0\.0019\s+0\.50\s+1\s+yes$/m);
    assert.match(text, /wall ÷ bound \(headline\)\s+1\.290 \/ 1\.300 \/ 1\.310/);
    assert.match(text, /wall ÷ bound 1\.300 \(target ≤ 1\.1\): MISSED/);
    assert.match(text, /engine's own CPU per step 66 ms \(target < 50 ms\): MISSED/);
    assert.match(text, /^run folder writes\s+14%\s+28\s+yes$/m);
    assert.match(text, /^engine client\s+1\.88\s+$/m);
  });
});

describe('bench file-system call counter', () => {
  it('counts the outer call only, in order, and puts the real functions back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skillopt-bench-fs-'));
    const before = fs.writeFileSync;
    try {
      const { value, calls } = await countFsCalls(() => {
        mkdirSync(join(dir, 'a'), { recursive: true });
        appendFileSync(join(dir, 'a', 'x.jsonl'), '{}\n');
        writeFileSync(join(dir, 'a', 'y.json'), '{}');
        renameSync(join(dir, 'a', 'y.json'), join(dir, 'a', 'z.json'));
        return Promise.resolve(existsSync(join(dir, 'a', 'z.json')));
      });
      assert.equal(value, true);
      // appendFileSync is built on writeFileSync inside Node; that inner call is not counted.
      assert.deepEqual(
        calls.map((c) => c.name),
        ['mkdirSync', 'appendFileSync', 'writeFileSync', 'renameSync', 'existsSync'],
      );
      const t = calls.map((c) => c.at);
      assert.deepEqual(countIn(calls, t[1], t[3]), { appendFileSync: 1, writeFileSync: 1 });
      assert.equal(fs.writeFileSync, before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
