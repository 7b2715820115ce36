import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SkillOptError } from '../../../src/engine/errors';
import { Accounting } from '../../../src/engine/llm/accounting';
import { createModelClient } from '../../../src/engine/llm/client';
import { agentCliBin } from '../../support/agentClis';
import { agentModel, startWireServer } from '../../support/loopback/agentModel';
import { hang, type LoopbackServer } from '../../support/loopback/core';
import { AGENT_TARGETS, agentBackend, capitalRequest } from './agentRuns';

/**
 * The model client's own limit on an agent run (env.exec_timeout + 60 s in a run, which a Copilot
 * task waiting for the first one, or an empty-answer rerun, can reach before the agent's own limit)
 * kills the CLI mid-run: what the CLI had reported it spent by then is paid, as a lower bound with
 * the request it was waiting on counted as cut off. Here the client's limit is short and the
 * agent's long, so the client's fires first.
 */
const { bin } = agentCliBin();

const SKILL =
  '---\nname: capitals\ndescription: Use when answering questions about capital cities.\n---\n\n# Capitals\n\nRULE-7: write the city name in UPPERCASE.\n';

for (const t of AGENT_TARGETS) {
  describe(`the model client's time limit cuts off a real ${t.agent} CLI mid-run`, function () {
    this.timeout(90_000);
    let base = '';
    let server: LoopbackServer | undefined;
    // The first model reply (the skill load) bills 4321 + 55 tokens; the second never comes.
    const usage = { promptTokens: 4321, completionTokens: 55 };

    before(async function () {
      if (!bin) {
        this.skip();
        return;
      }
      base = mkdtempSync(join(tmpdir(), `skillopt-${t.agent}-client-timeout-`));
      let replies = 0;
      server = await startWireServer(
        t.wire,
        agentModel({
          wire: t.wire,
          skillName: 'capitals',
          rule: 'RULE-7',
          trigger: /capital/i,
          override: (req, normal) => (replies++ === 0 ? { ...normal(req), usage } : hang()),
        }),
      );
    });
    after(async () => {
      await server?.close();
      if (base) rmSync(base, { recursive: true, force: true });
    });

    it('records the tokens the CLI reported before the kill, with the stalled request cut off', async () => {
      const accounting = new Accounting();
      const backend = agentBackend(t, bin!, base, server!.url, { timeoutMs: 80_000 });
      const client = createModelClient({
        role: 'target',
        backend,
        timeoutMs: 15_000,
        timeoutKey: 'env.exec_timeout',
        retry: { maxAttempts: 1 },
        accounting,
      });
      await assert.rejects(client.chat(capitalRequest('Peru', SKILL)), (e: unknown) => {
        assert.ok(SkillOptError.is(e, 'llm'), String(e));
        assert.match(e.message, /timed out|time limit|timeout/i);
        return true;
      });
      assert.equal(server!.requests.length, 2, 'the CLI was cut off waiting on its second request');
      await accounting.settled(10_000);
      const totals = accounting.totals();
      assert.equal(totals.failures, 1);
      assert.equal(totals.calls, 0);
      assert.equal(totals.promptTokens, usage.promptTokens);
      // Claude Code streams each reply's usage as it opens: its output figure is that first one (1).
      assert.equal(totals.completionTokens, t.agent === 'claude' ? 1 : usage.completionTokens);
      assert.equal(totals.cutOff, 1, 'the request it was waiting on is counted as cut off');
      // The killed run's task folder (its home with the CLI's session files) is gone too.
      assert.deepEqual(
        readdirSync(join(base, 'agents')).filter((f) => f.startsWith('task-')),
        [],
      );
    });
  });
}
