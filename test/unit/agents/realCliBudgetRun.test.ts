import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LedgerRow } from '../../../src/engine/llm/ledger';
import { agentCliBin } from '../../support/agentClis';
import type { LoopbackServer } from '../../support/loopback/core';
import { startOpenAiServer } from '../../support/loopback/openaiServer';
import { scriptedModels } from '../../support/loopback/scriptedModels';
import { runSim } from '../train/helpers';
import {
  AGENT_TARGETS,
  agentEnv,
  endpointOverrides,
  ledgerRows,
  OPTIMIZER_KEY,
  optimizerRequests,
  prepareAgentRun,
  skilloptCli,
  startAgentServer,
  writeCapitalsProject,
} from './agentRuns';

/**
 * A spend cap holds for an agent target: the real agent CLI reports the tokens its provider
 * billed, they reach the run's ledger, and `limits.max_tokens` stops the run at the next step
 * boundary, per run (a resumed run over its cap stops before spending; a raised cap goes on).
 */
const { bin } = agentCliBin();

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
    let base: string;
    let config: string;
    let out: string;
    let optimizer: LoopbackServer;
    let target: LoopbackServer;

    before(async function () {
      if (!bin) {
        this.skip();
        return;
      }
      base = mkdtempSync(join(tmpdir(), 'skillopt-agent-budget-run-'));
      config = writeCapitalsProject(join(base, 'project'), t);
      out = join(base, 'run');
      optimizer = await startOpenAiServer(scriptedModels([]));
      target = await startAgentServer(t, (req, normal) => ({ ...normal(req), usage: BILLED }));
    });
    after(async () => {
      await Promise.all([optimizer?.close(), target?.close()]);
      if (base) rmSync(base, { recursive: true, force: true });
    });

    const prepare = (maxTokens: number): ReturnType<typeof prepareAgentRun> =>
      prepareAgentRun(
        config,
        out,
        endpointOverrides(target, optimizer, join(base, 'agents'), [`limits.max_tokens=${maxTokens}`]),
        agentEnv(t, bin!, join(base, 'home')),
      );

    it('stops at the step boundary once the CLI-reported tokens reach the cap, and holds it across resumes', async () => {
      // Reached by the baseline alone: the run stops before step 1, the optimizer never asked.
      const first = prepare(1);
      const { outcome } = await runSim(first);
      assert.equal(outcome.status, 'stopped');
      const baselineRequests = target.requests.length;
      assert.ok(baselineRequests >= 2, `${baselineRequests} target requests`);
      const spent = baselineRequests * PER_REQUEST;
      assert.equal(outcome.reason, `token budget of 1 reached (${spent} used)`);
      assert.equal(optimizerRequests(optimizer), 0);
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
      assert.equal(target.requests.length, baselineRequests);
      assert.equal(optimizerRequests(optimizer), 0);
      assert.equal(tokens(ledgerRows(out)), spent);

      // A cap raised just above what was spent: step 1 runs whole (its rollouts, the optimizer, its
      // gate), then the run stops at the next boundary with everything it paid in the ledger.
      const raised = spent + 1;
      const third = await runSim(prepare(raised));
      assert.equal(third.outcome.status, 'stopped');
      assert.ok(optimizerRequests(optimizer) > 0, 'step 1 never asked the optimizer');
      assert.ok(target.requests.length > baselineRequests, 'step 1 never ran the agent');
      rows = ledgerRows(out);
      const targetSpent = target.requests.length * PER_REQUEST;
      assert.equal(tokens(rows, 'target'), targetSpent);
      const total = tokens(rows);
      assert.ok(total > targetSpent, 'the optimizer calls are in the ledger');
      assert.ok(total >= raised);
      assert.equal(third.outcome.reason, `token budget of ${raised} reached (${total} used)`);
      assert.ok(third.events.some((e) => e.type === 'step/finished' && e.record.step === 1));

      // The CLI on the same run folder: over its cap, exit 3 (stopped by a budget cap), nothing sent.
      const before = { target: target.requests.length, optimizer: optimizer.requests.length };
      const cli = await skilloptCli(
        [
          'train',
          config,
          '--out',
          out,
          '--resume',
          '--cfg-options',
          ...endpointOverrides(target, optimizer, join(base, 'agents'), [`limits.max_tokens=${raised}`]),
        ],
        { OPENAI_API_KEY: OPTIMIZER_KEY, ...agentEnv(t, bin!, join(base, 'home')) },
      );
      assert.equal(cli.code, 3, `stdout:\n${cli.stdout}\nstderr:\n${cli.stderr}`);
      assert.match(cli.stdout, new RegExp(`token budget of ${raised} reached \\(${total} used\\)`));
      assert.deepEqual({ target: target.requests.length, optimizer: optimizer.requests.length }, before);
      assert.equal(tokens(ledgerRows(out)), total);
    });
  });
}
