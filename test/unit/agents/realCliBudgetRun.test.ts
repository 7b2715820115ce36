import assert from 'node:assert/strict';
import type { LedgerRow } from '../../../src/engine/llm/ledger';
import { runSim } from '../train/helpers';
import { AGENT_TARGETS, AgentRunFixture, ledgerRows } from './agentRuns';

/**
 * A spend cap holds for an agent target: the real agent CLI reports the tokens its provider
 * billed, they reach the run's ledger, and `limits.max_tokens` stops the run at the next step
 * boundary, per run (a resumed run over its cap stops before spending; a raised cap goes on).
 */

/** What the target's provider bills for every reply (the CLI reports it; nothing is estimated). */
const BILLED = { promptTokens: 1000, completionTokens: 10 };
const PER_REQUEST = BILLED.promptTokens + BILLED.completionTokens;

const tokens = (rows: readonly LedgerRow[], role?: string): number =>
  rows
    .filter((r) => role === undefined || r.role === role)
    .reduce((n, r) => n + (r.prompt_tokens ?? 0) + (r.completion_tokens ?? 0), 0);

for (const t of AGENT_TARGETS) {
  describe(`a token cap on a training run whose target is the real ${t.agent} CLI`, function () {
    this.timeout(300_000);
    const f = AgentRunFixture.use(t, 'skillopt-agent-budget-run-', (req, normal) => ({
      ...normal(req),
      usage: BILLED,
    }));
    const prepare = (maxTokens: number): ReturnType<AgentRunFixture['prepare']> =>
      f.prepare('run', [`limits.max_tokens=${maxTokens}`]);

    it('stops at the step boundary once the CLI-reported tokens reach the cap, and holds it across resumes', async () => {
      // Reached by the baseline alone: the run stops before step 1, the optimizer never asked.
      const first = prepare(1);
      const out = first.outDir;
      const { outcome } = await runSim(first);
      assert.equal(outcome.status, 'stopped');
      const baselineRequests = f.target.requests.length;
      assert.ok(baselineRequests >= 2, `${baselineRequests} target requests`);
      const spent = baselineRequests * PER_REQUEST;
      assert.equal(outcome.reason, `token budget of 1 reached (${spent} used)`);
      assert.equal(f.optimizerRequests(), 0);
      let rows = ledgerRows(out);
      // Every reply the provider billed is in the ledger once, as the CLI reported it.
      assert.equal(tokens(rows), spent);
      assert.equal(tokens(rows, 'target'), spent);
      const totals = first.models.accounting.totals();
      assert.equal(totals.promptTokens, baselineRequests * BILLED.promptTokens);
      assert.equal(totals.completionTokens, baselineRequests * BILLED.completionTokens);

      // Resumed under the same cap: it says so and spends nothing more.
      const again = await runSim(prepare(1));
      assert.equal(again.outcome.status, 'stopped');
      assert.match(again.outcome.reason ?? '', /token budget of 1 reached/);
      assert.equal(f.target.requests.length, baselineRequests);
      assert.equal(f.optimizerRequests(), 0);
      assert.equal(tokens(ledgerRows(out)), spent);

      // A cap raised just above what was spent: step 1 runs whole (its rollouts, the optimizer, its
      // gate), then the run stops at the next boundary with everything it paid in the ledger.
      const raised = spent + 1;
      const third = await runSim(prepare(raised));
      assert.equal(third.outcome.status, 'stopped');
      assert.ok(f.optimizerRequests() > 0, 'step 1 never asked the optimizer');
      assert.ok(f.target.requests.length > baselineRequests, 'step 1 never ran the agent');
      rows = ledgerRows(out);
      const targetSpent = f.target.requests.length * PER_REQUEST;
      assert.equal(tokens(rows, 'target'), targetSpent);
      const total = tokens(rows);
      assert.ok(total > targetSpent, 'the optimizer calls are in the ledger');
      assert.ok(total >= raised);
      assert.equal(third.outcome.reason, `token budget of ${raised} reached (${total} used)`);
      assert.ok(third.events.some((e) => e.type === 'step/finished' && e.record.step === 1));

      // The CLI on the same run folder: over its cap, exit 3 (stopped by a budget cap), nothing sent.
      const before = { target: f.target.requests.length, optimizer: f.optimizer.requests.length };
      const cli = await f.train('run', ['--resume'], [`limits.max_tokens=${raised}`]);
      assert.equal(cli.code, 3, `stdout:\n${cli.stdout}\nstderr:\n${cli.stderr}`);
      assert.match(cli.stdout, new RegExp(`token budget of ${raised} reached \\(${total} used\\)`));
      assert.deepEqual({ target: f.target.requests.length, optimizer: f.optimizer.requests.length }, before);
      assert.equal(tokens(ledgerRows(out)), total);
    });
  });
}
