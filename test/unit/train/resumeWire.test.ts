import assert from 'node:assert/strict';
import type { LedgerRow } from '../../../src/engine/llm/ledger';
import { PriceTable } from '../../../src/engine/llm/prices';
import type { PromptCacheSummary } from '../../../src/engine/llm/spendText';
import { prepareRun, type PreparedRun } from '../../../src/engine/run';
import type { Handler } from '../../support/loopback/core';
import { contentText, estimateTokens } from '../../support/loopback/core';
import {
  openAiMessages,
  openAiPromptText,
  startOpenAiServer,
  type LoopbackServer,
} from '../../support/loopback/openaiServer';
import { scriptedModels } from '../../support/loopback/scriptedModels';
import { matches, midStageStops, slowGateStop } from './midStageStops';
import {
  CallLog,
  comparableHistory,
  exampleConfig,
  paidKeys,
  read,
  readJson,
  runSim,
  tempDir,
} from './helpers';

/**
 * Money across stop and resume with priced models over the real `openai` SDK: the loopback server
 * plays both models and reports cached tokens, so every paid call has a price in dollars with a
 * cached-input part, and the ledger, summary.json and report.md must add up exactly.
 */
const TARGET = 'gpt-4.1-mini';
const OPTIMIZER = 'gpt-4.1';

/**
 * The built-in list prices of both models, written as config prices: over a loopback URL the
 * provider is `openai_compatible`, which the built-in table (rightly) does not price.
 */
function listPrices(): string[] {
  const table = new PriceTable();
  return [TARGET, OPTIMIZER].flatMap((model) => {
    const p = table.lookup(model, 'openai');
    assert.ok(p?.cached_input_per_mtok !== undefined, `no built-in cached price for ${model}`);
    return [
      `prices.${model}.input_per_mtok=${p.input_per_mtok}`,
      `prices.${model}.output_per_mtok=${p.output_per_mtok}`,
      `prices.${model}.cached_input_per_mtok=${p.cached_input_per_mtok}`,
    ];
  });
}

/**
 * OpenAI's prompt cache, played so that a call's usage depends only on what it asks (not on which
 * calls came first, which concurrency and a stop change): the system prompt, the stable part, is
 * always reported as read from the cache in `prompt_tokens_details.cached_tokens`.
 */
function systemPromptCached(next: Handler): Handler {
  return async (req) => {
    const reply = await next(req);
    if (reply.kind !== 'reply') return reply;
    const first = openAiMessages(req)[0];
    const system = first?.role === 'system' ? Math.floor(contentText(first.content).length / 4) : 0;
    const prompt = estimateTokens(openAiPromptText(req));
    return { ...reply, usage: { promptTokens: prompt, cachedTokens: Math.min(system, prompt) } };
  };
}

function prepare(server: LoopbackServer, outDir: string, extra: string[] = []): PreparedRun {
  return prepareRun({
    configPath: exampleConfig,
    outDir,
    overrides: [
      'cache.enabled=false',
      'model.optimizer_backend=openai',
      'model.target_backend=openai',
      `model.optimizer=${OPTIMIZER}`,
      `model.target=${TARGET}`,
      `model.optimizer_base_url=${server.url}`,
      `model.target_base_url=${server.url}`,
      ...listPrices(),
      ...extra,
    ],
  });
}

function ledger(dir: string): LedgerRow[] {
  return read(dir, 'ledger.jsonl')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as LedgerRow);
}

/** Paid calls and tokens per role and model, from the ledger, and the dollars of all of them. */
function ledgerSpend(dir: string): { byModel: Record<string, number[]>; dollars: number; unpriced: number } {
  const byModel: Record<string, number[]> = {};
  let dollars = 0;
  let unpriced = 0;
  for (const r of ledger(dir)) {
    if (r.kind !== 'usage' || !r.calls) continue;
    const t = (byModel[`${r.role}/${r.model}`] ??= [0, 0, 0, 0]);
    t[0] += r.calls;
    t[1] += r.prompt_tokens ?? 0;
    t[2] += r.cached_tokens ?? 0;
    t[3] += r.completion_tokens ?? 0;
    if (typeof r.dollars === 'number') dollars += r.dollars;
    else unpriced++;
  }
  return { byModel, dollars, unpriced };
}

/** report.md's spend table (one row per role, dollars to four places). */
function spendTable(dir: string): string[] {
  return read(dir, 'report.md')
    .split('\n')
    .filter((l) => /^\| (target|optimizer|total)/i.test(l) && l.includes('$'));
}

/** Dollars agree to a millionth of a cent: sums of the same prices in another order. */
const sameDollars = (a: number, b: number, what: string): void =>
  assert.ok(Math.abs(a - b) <= 1e-8, `${what}: ${a} against ${b}`);

describe('spend across resume with priced models (OpenAI wire, loopback)', function () {
  this.timeout(120_000);
  let server: LoopbackServer;
  let refDir: ReturnType<typeof tempDir>;
  let ref: CallLog;
  let refSpend: ReturnType<typeof ledgerSpend>;

  before(async () => {
    refDir = tempDir('skillopt-wire-ref-');
    const probe = prepareRun({ configPath: exampleConfig, outDir: refDir.path, dryRun: true });
    const tasks = [...probe.splits.train, ...probe.splits.val, ...probe.splits.test.unsealForEvaluation()];
    server = await startOpenAiServer(systemPromptCached(scriptedModels(tasks, undefined, TARGET)));
    const prepared = prepare(server, refDir.path);
    ref = new CallLog(prepared);
    assert.equal((await runSim(prepared, undefined, ref)).outcome.status, 'finished');
    refSpend = ledgerSpend(refDir.path);
    // The reference itself is priced, cached input included: otherwise the comparisons prove nothing.
    assert.equal(refSpend.unpriced, 0, 'a paid call without a price');
    assert.ok(refSpend.dollars > 0);
    for (const [model, t] of Object.entries(refSpend.byModel))
      assert.ok(t[2] > 0 && t[2] < t[1], `${model}: no cached tokens, or all of them`);
  });
  after(async () => {
    await server.close();
    refDir.cleanup();
  });

  // The five stop points of the sim tests (resume.test.ts), here priced over the wire.
  for (const stop of [...midStageStops, slowGateStop])
    it(`a run stopped ${stop.name} and resumed pays each reply once, for the dollars of one uninterrupted run`, async () => {
      const dir = tempDir('skillopt-wire-resume-');
      try {
        // The stage's calls one at a time, stopped right after the chosen reply arrived.
        const inStage = matches(stop);
        const total = ref.calls.filter(inStage).length;
        assert.ok(total > stop.after, `the reference makes only ${total} such calls`);
        const p1 = prepare(server, dir.path);
        const first = new CallLog(p1, {
          serialize: inStage,
          stopAfterReply: (c, log) =>
            inStage(c) && log.calls.filter((x) => inStage(x) && x.answered).length >= stop.after,
        });
        assert.equal(
          (await runSim(p1, undefined, first)).outcome.status,
          'stopped',
          'the stop was never reached',
        );
        const kept = stop.kept(dir.path);
        assert.ok(kept > 0 && kept < total, `kept ${kept} of ${total}: the stop did not land mid-stage`);
        const paidBeforeStop = ledgerSpend(dir.path);
        assert.ok(paidBeforeStop.dollars > 0 && paidBeforeStop.dollars < refSpend.dollars);

        const p2 = prepare(server, dir.path);
        const second = new CallLog(p2);
        assert.equal((await runSim(p2, undefined, second)).outcome.status, 'finished');
        assert.deepEqual(comparableHistory(dir.path), comparableHistory(refDir.path));

        // Each distinct request was paid as often over both processes as in the uninterrupted run.
        const sorted = (m: Map<string, number>): Array<[string, number]> =>
          [...m.entries()].sort(([a], [b]) => a.localeCompare(b));
        assert.deepEqual(sorted(paidKeys(first, second)), sorted(paidKeys(ref)));
        // The ledger: the same calls and tokens (cached ones too) per model, and the same dollars.
        const spent = ledgerSpend(dir.path);
        assert.deepEqual(spent.byModel, refSpend.byModel);
        assert.equal(spent.unpriced, 0);
        sameDollars(spent.dollars, refSpend.dollars, 'ledger dollars, both processes against one run');
        // What the run shows reads the ledger: the report's dollars and the summary's cache saving.
        assert.deepEqual(spendTable(dir.path), spendTable(refDir.path));
        assert.ok(spendTable(refDir.path).length > 0, 'report.md has no dollars');
        const cache = (d: string): PromptCacheSummary =>
          readJson<{ prompt_cache: PromptCacheSummary }>(d, 'summary.json').prompt_cache;
        const [got, want] = [cache(dir.path), cache(refDir.path)];
        assert.deepEqual({ ...got, saved_dollars: 0 }, { ...want, saved_dollars: 0 });
        assert.ok(want.saved_dollars !== null && want.saved_dollars > 0);
        sameDollars(got.saved_dollars ?? NaN, want.saved_dollars, 'prompt-cache saving');
      } finally {
        dir.cleanup();
      }
    });

  it('a dollar cap reached partway holds across resume: the resumed run stops at once, paying nothing', async () => {
    const dir = tempDir('skillopt-wire-cap-');
    try {
      // About 40% of what the whole run costs, in whole cents so the message shows it exactly.
      const cap = Math.round(refSpend.dollars * 40) / 100;
      assert.ok(cap > 0);
      const capped = [`limits.max_dollars=${cap}`];
      const first = await runSim(prepare(server, dir.path, capped));
      assert.equal(first.outcome.status, 'stopped');
      const reached = new RegExp(
        `dollar budget of \\$${cap.toFixed(2)} reached \\(\\$\\d+\\.\\d\\d spent\\)`,
      );
      assert.match(first.outcome.reason ?? '', reached);
      const paid = ledgerSpend(dir.path);
      assert.ok(
        paid.dollars >= cap && paid.dollars < refSpend.dollars,
        `paid $${paid.dollars} of a $${cap} cap`,
      );

      const sent = server.requests.length;
      const again = await runSim(prepare(server, dir.path, capped));
      assert.equal(again.outcome.status, 'stopped', 'the resumed run forgot what the first process paid');
      assert.match(again.outcome.reason ?? '', reached);
      assert.equal(server.requests.length, sent, 'the resumed run sent requests beyond its cap');
      assert.deepEqual(ledgerSpend(dir.path), paid, 'the resumed run paid beyond its cap');

      // Raising the cap lets the run finish; all its processes together cost one uninterrupted run.
      const raised = await runSim(prepare(server, dir.path, [`limits.max_dollars=${cap * 10}`]));
      assert.equal(raised.outcome.status, 'finished');
      const spent = ledgerSpend(dir.path);
      assert.deepEqual(spent.byModel, refSpend.byModel);
      sameDollars(spent.dollars, refSpend.dollars, 'ledger dollars after the cap was raised');
    } finally {
      dir.cleanup();
    }
  });
});
