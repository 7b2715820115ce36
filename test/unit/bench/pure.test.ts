import assert from 'node:assert/strict';
import { parseRunArgs, parseServerArgs, UsageError } from '../../../bench/args';
import { withBusyNote } from '../../../bench/busy';
import { repaidRequests } from '../../../bench/cacheBench';
import { fnv1a, latencyFor, requestKey } from '../../../bench/latency';
import { padReply } from '../../../bench/server';
import { duplicateCalls } from '../../../bench/speed';
import { fmtSpread, linearFit, median, spread, table } from '../../../bench/stats';
import { paddedSkill } from '../../../bench/tokens';
import { habits, harmfulRules } from '../../../src/engine/llm/sim/habits';

describe('bench latency model', () => {
  it('hashes with FNV-1a (32 bit)', () => {
    assert.equal(fnv1a(''), 0x811c9dc5);
    assert.equal(fnv1a('a'), 0xe40c292c);
    assert.equal(fnv1a('hello'), 0x4f9f2cab);
  });

  it('gives fixed latency without jitter, and a repeatable value within [L, L + J] with it', () => {
    const profile = { latencyMs: 300, jitterMs: 30, seed: 1 };
    assert.equal(latencyFor('anything', { ...profile, jitterMs: 0 }), 300);
    const keys = Array.from({ length: 200 }, (_, i) => requestKey(['system', `task ${i}`]));
    const values = keys.map((k) => latencyFor(k, profile));
    assert.ok(values.every((v) => v >= 300 && v <= 330 && Number.isInteger(v)));
    assert.deepEqual(
      keys.map((k) => latencyFor(k, profile)),
      values,
    );
    // Spread over the range, and a different seed deals the jitter differently.
    assert.ok(new Set(values).size > 20);
    assert.notDeepEqual(
      keys.map((k) => latencyFor(k, { ...profile, seed: 2 })),
      values,
    );
  });

  it('keys a request by its message texts in order', () => {
    assert.equal(requestKey(['a', 'b']), 'a\u0001b');
    assert.notEqual(requestKey(['a', 'b']), requestKey(['b', 'a']));
  });
});

describe('bench busy note', () => {
  const reply = (edits: unknown[]): string =>
    'preamble\n```json\n' +
    JSON.stringify({ batch_size: 8, patch: { reasoning: 'r $1 $&', edits } }, null, 2) +
    '\n```';

  it('adds one append edit that depends on the request, while the budget has room', () => {
    const out = withBusyNote(
      reply([{ op: 'append', content: '- Rule.' }]),
      'key-1',
      '## Budget\nPropose at most 4 edits.',
    );
    const json = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(out)![1]) as {
      patch: { reasoning: string; edits: Array<{ op: string; content: string }> };
    };
    assert.equal(json.patch.edits.length, 2);
    assert.deepEqual(json.patch.edits[1], {
      op: 'append',
      content: `- Form note ${fnv1a('key-1').toString(16).padStart(8, '0')}: answers are pasted into forms as written.`,
    });
    // `$` in the reply survives (no replacement patterns).
    assert.equal(json.patch.reasoning, 'r $1 $&');
    assert.ok(out.startsWith('preamble\n```json\n'));
    assert.notEqual(
      withBusyNote(reply([]), 'key-2', 'Propose at most 4 edits.'),
      withBusyNote(reply([]), 'key-1', 'Propose at most 4 edits.'),
    );
  });

  it('leaves a full budget, other payloads and unparseable replies alone', () => {
    const full = reply([
      { op: 'append', content: '- A.' },
      { op: 'append', content: '- B.' },
    ]);
    assert.equal(withBusyNote(full, 'k', 'Propose at most 2 edits.'), full);
    const suggestions = '```json\n{"patch": {"revise_suggestions": []}}\n```';
    assert.equal(withBusyNote(suggestions, 'k', 'Propose at most 4 edits.'), suggestions);
    assert.equal(withBusyNote('no json here', 'k', 'Propose at most 4 edits.'), 'no json here');
    assert.equal(withBusyNote('```json\n{oops\n```', 'k', 'Propose at most 4 edits.'), '```json\n{oops\n```');
  });

  it('pads a target reply to the asked length with the answer kept at the end', () => {
    const text = 'Applying the skill.\n<answer>2024-03-05</answer>';
    const padded = padReply(text, 500);
    assert.equal(padded.length, 500);
    assert.ok(padded.endsWith(`\n${text}`));
    assert.equal(padReply(text, 10), `\n${text}`);
  });
});

describe('bench command-line options', () => {
  it('parses the server options the issue names, with defaults', () => {
    assert.deepEqual(parseServerArgs(['--port', '9000', '--latency-ms', '250', '--concurrency', '8']), {
      port: 9000,
      latencyMs: 250,
      jitterMs: 0,
      optimizerConcurrency: 8,
      targetConcurrency: 8,
      seed: 1,
      busy: true,
      json: false,
    });
    const a = parseServerArgs([
      '--port=0',
      '--jitter-ms=20',
      '--target-concurrency',
      '4',
      '--no-busy',
      '--tasks',
      'x',
    ]);
    assert.deepEqual(
      [a.port, a.jitterMs, a.optimizerConcurrency, a.targetConcurrency, a.busy, a.tasks],
      [0, 20, 16, 4, false, 'x'],
    );
  });

  it('parses run options: quick and full defaults, sections', () => {
    const quick = parseRunArgs(['--quick']);
    assert.deepEqual([quick.quick, quick.reps, quick.latencyMs, quick.jitterMs], [true, 2, 100, 0]);
    const full = parseRunArgs([]);
    assert.deepEqual([full.quick, full.reps, full.latencyMs, full.concurrency], [false, 5, 300, 16]);
    assert.deepEqual(full.only, [
      'neutral',
      'speed',
      'jitter',
      'overhead',
      'tokens',
      'cache',
      'batch',
      'spend',
      'footprint',
    ]);
    assert.deepEqual([full.neutralLatencyMs, quick.neutralLatencyMs], [300, 300]);
    assert.deepEqual(quick.only, [
      'neutral',
      'speed',
      'overhead',
      'tokens',
      'cache',
      'batch',
      'spend',
      'footprint',
    ]);
    assert.deepEqual(parseRunArgs(['--only', 'speed, cache']).only, ['speed', 'cache']);
  });

  it('says what is wrong with bad options', () => {
    assert.throws(() => parseServerArgs(['--latency']), /unknown option --latency/);
    assert.throws(() => parseServerArgs(['--port']), /--port needs a value/);
    assert.throws(
      () => parseServerArgs(['--concurrency', '0']),
      /--concurrency must be an integer ≥ 1, got "0"/,
    );
    assert.throws(() => parseServerArgs(['--json=yes']), /--json takes no value/);
    assert.throws(() => parseServerArgs(['9000']), /unexpected argument "9000"/);
    assert.throws(() => parseRunArgs(['--only', 'speed,colour']), /unknown section "colour"/);
    assert.throws(() => parseRunArgs(['--help']), UsageError);
  });
});

describe('bench statistics and tables', () => {
  it('summarises repetitions as min, median and max', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 2, 3]), 2.5);
    assert.deepEqual(spread([1.2, 1.1, 1.4]), { min: 1.1, median: 1.2, max: 1.4, n: 3 });
    assert.equal(spread([]).n, 0);
    assert.equal(fmtSpread(spread([1.2, 1.1, 1.4]), 2), '1.10 / 1.20 / 1.40');
    assert.equal(fmtSpread(spread([5]), 0, ' ms'), '5 ms');
    assert.equal(fmtSpread(spread([])), '–');
  });

  it('fits a line', () => {
    const fit = linearFit([
      [0, 1],
      [1, 3],
      [2, 5],
    ]);
    assert.deepEqual([fit.slope, fit.intercept, fit.r2], [2, 1, 1]);
    assert.throws(() => linearFit([[1, 1]]), /at least two points/);
    assert.throws(
      () =>
        linearFit([
          [1, 1],
          [1, 2],
        ]),
      /all x values are equal/,
    );
  });

  it('aligns numbers right and text left', () => {
    assert.equal(
      table(
        ['stage', 'ms'],
        [
          ['rollout', '12'],
          ['evaluate', '3'],
        ],
      ),
      ['stage     ms', '────────  ──', 'rollout   12', 'evaluate   3'].join('\n'),
    );
  });
});

describe('bench accounting of repeated requests', () => {
  it('counts identical non-cached requests after the first, per stage label', () => {
    assert.deepEqual(
      duplicateCalls([
        { kind: 'test', cached: false, hash: 1 },
        { kind: 'test', cached: false, hash: 1 },
        { kind: 'test', cached: true, hash: 1 },
        { kind: 'rollout', cached: false, hash: 2 },
        { kind: 'selection', cached: false, hash: 2 },
        { kind: 'rollout', cached: false },
      ]),
      { test: 1, selection: 1 },
    );
  });

  it('tells replies paid twice from replies dropped at a stop', () => {
    const before = [
      { hash: 1, answered: true },
      { hash: 2, answered: true },
      { hash: 3, answered: false },
    ];
    const after = [
      { hash: 1, stage: 'target' },
      { hash: 2, stage: 'analyst' },
      { hash: 3, stage: 'target' },
      { hash: 4, stage: 'merge' },
    ];
    // The engine had received reply 1; reply 2 reached the socket but not the engine; 3 was cut off.
    assert.deepEqual(repaidRequests(before, new Set([1]), after), { repaid: { target: 1 }, dropped: 1 });
  });
});

describe('bench skill padding for the prompt-growth sweep', () => {
  it('reaches the asked size with lines that change nothing for the scripted target', () => {
    const base = '# Skill\n\n## Rules\n\n- Give only the final answer.\n';
    assert.equal(paddedSkill(base, 0), base);
    const big = paddedSkill(base, 5000);
    assert.ok(big.length >= 5000 && big.length < 5200, String(big.length));
    assert.ok(big.startsWith('# Skill'));
    for (const h of habits) assert.ok(!h.corrected.test(big), `padding corrects habit ${h.name}`);
    for (const r of harmfulRules) assert.ok(!r.effect.test(big));
  });
});
