import assert from 'node:assert/strict';
import type { LedgerRow } from '../../../src/engine/llm/ledger';
import { cliPricedProvider } from '../../../src/engine/llm/prices';
import { runSim } from '../train/helpers';
import { AGENT_TARGETS, AgentRunFixture, ledgerRows } from './agentRuns';

/**
 * A dollar cap holds for an agent target: each real CLI's reported tokens are priced by the
 * provider it talks to (Claude Code's own list-priced cost for a model it knows; the config's
 * `prices:` for a model only the config prices), reach the ledger with their dollars, and
 * `limits.max_dollars` stops the run at the next step boundary, also when it is resumed.
 */

/** What the target's provider bills for every reply: at $3 / $15 per million, $0.315. */
const BILLED = { promptTokens: 100_000, completionTokens: 1_000 };
const PER_REQUEST = (BILLED.promptTokens * 3 + BILLED.completionTokens * 15) / 1e6;

const dollars = (rows: readonly LedgerRow[]): number =>
  rows.filter((r) => r.role === 'target').reduce((n, r) => n + (r.dollars ?? 0), 0);

for (const t of AGENT_TARGETS) {
  describe(`a dollar cap on a training run whose target is the real ${t.agent} CLI`, function () {
    this.timeout(300_000);
    const f = AgentRunFixture.use(t, 'skillopt-agent-dollar-cap-', (req, normal) => ({
      ...normal(req),
      usage: BILLED,
    }));
    // Claude Code prices a model it knows itself; the others' test model is priced in the config.
    const pricing =
      t.agent === 'claude'
        ? ['model.target=claude-sonnet-4-5']
        : [
            'prices.loopback-target-model.input_per_mtok=3',
            'prices.loopback-target-model.output_per_mtok=15',
          ];
    const cap = ['limits.max_dollars=0.5', ...pricing];

    it('stops once the priced agent calls reach the cap, and a resume under it spends nothing', async () => {
      const first = f.prepare('run', cap);
      const { outcome } = await runSim(first);
      const requests = f.target.requests.length;
      assert.ok(requests >= 2, `${requests} target requests`);
      const spent = requests * PER_REQUEST;
      assert.equal(outcome.status, 'stopped', outcome.reason);
      assert.equal(outcome.reason, `dollar budget of $0.50 reached ($${spent.toFixed(2)} spent)`);
      assert.equal(f.optimizerRequests(), 0);
      const rows = ledgerRows(first.outDir).filter((r) => r.role === 'target' && r.kind === 'usage');
      // Every billed reply is in the ledger once, with its price, under the provider the CLI talks to.
      assert.ok(Math.abs(dollars(rows) - spent) < 1e-9, `${dollars(rows)} vs ${spent}`);
      const provider = t.agent === 'claude' ? cliPricedProvider('anthropic') : 'openai_compatible';
      assert.deepEqual([...new Set(rows.map((r) => r.provider))], [provider]);
      assert.ok(Math.abs((first.models.accounting.totals().dollars ?? NaN) - spent) < 1e-9);

      // The CLI on the same run folder: over its cap, exit 3, nothing sent.
      const cli = await f.train('run', ['--resume'], cap);
      assert.equal(cli.code, 3, `stdout:\n${cli.stdout}\nstderr:\n${cli.stderr}`);
      assert.match(cli.stdout, /dollar budget of \$0\.50 reached/);
      assert.equal(f.target.requests.length, requests);
      assert.equal(f.optimizerRequests(), 0);
    });
  });
}
