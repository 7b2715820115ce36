import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SkillOptError } from '../../../src/engine/errors';
import type { EngineEvent } from '../../../src/protocol/events';
import type { RolloutResult } from '../../../src/protocol/records';
import { hang, status, type Reply } from '../../support/loopback/core';
import { runSim } from '../train/helpers';
import { AGENT_TARGETS, AgentRunFixture } from './agentRuns';

/**
 * Errored is not failed, at run level, with a real agent CLI as the target: a target that cannot
 * run (a 401 from its provider, a provider that never answers, a program that is not installed)
 * stops the training run with the cause, counts the items as errored, and the optimizer is never paid.
 */

/** The first error each CLI prints for the 401, which the stop message quotes. */
const AUTH_EXCERPT: Record<string, RegExp> = {
  claude: /First error: model\.target_backend: Invalid API key/,
  codex: /First error: model\.target_backend: unexpected status 401 Unauthorized: invalid x-api-key/,
  copilot: /First error: model\.target_backend: Authentication failed with provider at \S+ \(HTTP 401\)/,
};

/** Every results.jsonl row the run wrote, wherever its stage put it. */
function resultRows(outDir: string): RolloutResult[] {
  const rows: RolloutResult[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === 'results.jsonl')
        rows.push(
          ...readFileSync(p, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as RolloutResult),
        );
    }
  };
  walk(outDir);
  return rows;
}

for (const t of AGENT_TARGETS) {
  describe(`a training run whose real ${t.agent} CLI target cannot run`, function () {
    this.timeout(180_000);
    /** What the target's provider does with every request (a 401 unless a test says otherwise). */
    let provider: () => Reply;
    const f = AgentRunFixture.use(t, 'skillopt-agent-errored-run-', () => provider());
    beforeEach(() => {
      provider = () => status(401, 'invalid x-api-key');
      f.optimizer?.requests.splice(0);
      f.target?.requests.splice(0);
    });

    it('a 401 stops the run naming the cause, the items are errored (not failed), the optimizer is never asked', async () => {
      const prepared = f.prepare('run-401');
      const events: EngineEvent[] = [];
      await assert.rejects(
        runSim(prepared, (e) => {
          events.push(e);
          return false;
        }),
        (err: unknown) => {
          assert.ok(SkillOptError.is(err, 'target'), String(err));
          assert.match(err.message, /could not answer 2 of 2 items/);
          assert.match(err.message, /not authorised/);
          assert.match(err.message, AUTH_EXCERPT[t.agent]);
          return true;
        },
      );
      assert.ok(f.target.requests.length > 0, 'the CLI never reached its provider');
      assert.equal(f.optimizerRequests(), 0, 'the optimizer was paid although the target never answered');
      const failed = events.find((e) => e.type === 'run/failed');
      assert.ok(failed && failed.type === 'run/failed');
      assert.equal(failed.reason, 'target');
      // What was recorded of the items: errored with the auth cause, none scored as a wrong answer.
      const rows = resultRows(prepared.outDir);
      assert.ok(rows.length >= 2, `${rows.length} result rows`);
      for (const r of rows) {
        assert.equal(r.outcome, 'errored', JSON.stringify(r));
        assert.equal(r.error_kind, 'auth', JSON.stringify(r));
      }
      assert.ok(!existsSync(join(prepared.outDir, 'history.json')), 'a step was recorded');
    });

    it('a provider that never answers: each item times out as errored, the run stops, the optimizer is never asked', async () => {
      provider = () => hang();
      // All four items at once (the baseline's and step 1's), so the run waits out one limit.
      const prepared = f.prepare('run-hang', ['env.exec_timeout=10', 'limits.agent_concurrency=4']);
      await assert.rejects(runSim(prepared), (err: unknown) => {
        assert.ok(SkillOptError.is(err, 'target'), String(err));
        assert.match(err.message, /could not answer 2 of 2 items in a selection evaluation/);
        assert.match(err.message, /timed out ×2/);
        assert.match(err.message, /gave no answer within the time limit/);
        return true;
      });
      assert.ok(f.target.requests.length > 0, 'the CLI never reached its provider');
      assert.equal(f.optimizerRequests(), 0);
      const rows = resultRows(prepared.outDir);
      assert.ok(rows.length >= 2, `${rows.length} result rows`);
      assert.ok(
        rows.every((r) => r.outcome === 'errored' && r.error_kind === 'timeout'),
        JSON.stringify(rows),
      );
    });

    it('a program that is not installed is refused before the run starts, naming the program and the key', async () => {
      const missing = join(f.base, 'no-such-dir', t.agent);
      const key = `model.${t.backend}_path`;
      assert.throws(
        () => f.prepare('run-missing', [`${key}=${missing}`]),
        (err: unknown) => {
          assert.ok(SkillOptError.is(err), String(err));
          assert.equal(err.place.key, key);
          assert.match(err.message, /was not found on PATH/);
          assert.ok(err.message.includes(missing), err.message);
          return true;
        },
      );
      // The same through the CLI: a non-zero exit, one line naming it, nothing asked of either model.
      const cli = await f.train('run-cli-missing', [], [`${key}=${missing}`]);
      assert.equal(cli.code, 1, cli.stderr);
      assert.match(
        cli.stderr,
        new RegExp(`^skillopt: ${key}: .* \\(${missing}\\) was not found on PATH`, 'm'),
      );
      assert.equal(f.target.requests.length, 0);
      assert.equal(f.optimizerRequests(), 0);
    });

    it('the CLI: a 401 ends `skillopt train` with a non-zero exit and the cause on stderr, the optimizer unpaid', async () => {
      const { code, stdout, stderr } = await f.train('run-cli-401', []);
      assert.equal(code, 1, `stdout:\n${stdout}\nstderr:\n${stderr}`);
      assert.match(stderr, /could not answer 2 of 2 items/);
      assert.match(stderr, /not authorised/);
      assert.match(stderr, AUTH_EXCERPT[t.agent]);
      assert.doesNotMatch(stdout, /Finished/);
      assert.ok(f.target.requests.length > 0);
      assert.equal(f.optimizerRequests(), 0);
    });
  });
}
