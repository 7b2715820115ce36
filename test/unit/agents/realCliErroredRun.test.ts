import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SkillOptError } from '../../../src/engine/errors';
import type { EngineEvent } from '../../../src/protocol/events';
import type { RolloutResult } from '../../../src/protocol/records';
import { agentCliBin } from '../../support/agentClis';
import { agentModel } from '../../support/loopback/agentModel';
import { startAnthropicServer } from '../../support/loopback/anthropicServer';
import { status, type LoopbackServer } from '../../support/loopback/core';
import { startOpenAiServer } from '../../support/loopback/openaiServer';
import { scriptedModels } from '../../support/loopback/scriptedModels';
import { runSim } from '../train/helpers';
import {
  agentEnv,
  endpointOverrides,
  OPTIMIZER_KEY,
  optimizerRequests,
  prepareAgentRun,
  skilloptCli,
  writeCapitalsProject,
} from './agentRuns';

/**
 * Errored is not failed, at run level, with the real Claude Code CLI as the target: a target that
 * cannot run (a 401 from its provider, a program that is not installed) stops the training run
 * with the cause, counts the items as errored, and the optimizer is never paid.
 */
const { bin } = agentCliBin();

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

describe('a training run whose real agent CLI target cannot run', function () {
  this.timeout(180_000);
  let base: string;
  let config: string;
  let optimizer: LoopbackServer;
  let target: LoopbackServer;

  before(async function () {
    if (!bin) {
      this.skip();
      return;
    }
    base = mkdtempSync(join(tmpdir(), 'skillopt-agent-errored-run-'));
    config = writeCapitalsProject(join(base, 'project'));
    optimizer = await startOpenAiServer(scriptedModels([]));
    // The target's provider refuses the key on every request.
    target = await startAnthropicServer(
      agentModel({
        wire: 'anthropic',
        skillName: 'capitals',
        rule: 'RULE-7',
        trigger: /capital/i,
        override: () => status(401, 'invalid x-api-key'),
      }),
    );
  });
  after(async () => {
    await Promise.all([optimizer?.close(), target?.close()]);
    if (base) rmSync(base, { recursive: true, force: true });
  });
  beforeEach(() => {
    if (optimizer) optimizer.requests.length = 0;
    if (target) target.requests.length = 0;
  });

  it('a 401 stops the run naming the cause, the items are errored (not failed), the optimizer is never asked', async () => {
    const out = join(base, 'run-401');
    const prepared = prepareAgentRun(
      config,
      out,
      endpointOverrides(target, optimizer, join(base, 'agents')),
      agentEnv(bin, join(base, 'home')),
    );
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
        assert.match(err.message, /Invalid API key/);
        return true;
      },
    );
    assert.ok(target.requests.length > 0, 'the CLI never reached its provider');
    assert.equal(
      optimizerRequests(optimizer),
      0,
      'the optimizer was paid although the target never answered',
    );
    const failed = events.find((e) => e.type === 'run/failed');
    assert.ok(failed && failed.type === 'run/failed');
    assert.equal(failed.reason, 'target');
    // What was recorded of the items: errored with the auth cause, none scored as a wrong answer.
    const rows = resultRows(out);
    assert.ok(rows.length >= 2, `${rows.length} result rows`);
    for (const r of rows) {
      assert.equal(r.outcome, 'errored', JSON.stringify(r));
      assert.equal(r.error_kind, 'auth', JSON.stringify(r));
    }
    assert.ok(!existsSync(join(out, 'history.json')), 'a step was recorded');
  });

  it('a program that is not installed is refused before the run starts, naming the program and the key', async () => {
    const missing = join(base, 'no-such-dir', 'claude');
    const overrides = endpointOverrides(target, optimizer, join(base, 'agents'), [
      `model.claude_code_exec_path=${missing}`,
    ]);
    assert.throws(
      () => prepareAgentRun(config, join(base, 'run-missing'), overrides, agentEnv(bin, join(base, 'home'))),
      (err: unknown) => {
        assert.ok(SkillOptError.is(err), String(err));
        assert.equal(err.place.key, 'model.claude_code_exec_path');
        assert.match(err.message, /was not found on PATH/);
        assert.ok(err.message.includes(missing), err.message);
        return true;
      },
    );
    // The same through the CLI: a non-zero exit, one line naming it, nothing asked of either model.
    const cli = await skilloptCli(
      ['train', config, '--out', join(base, 'run-cli-missing'), '--cfg-options', ...overrides],
      { ...agentEnv(bin, join(base, 'home')), OPENAI_API_KEY: OPTIMIZER_KEY },
    );
    assert.equal(cli.code, 1, cli.stderr);
    assert.match(
      cli.stderr,
      /^skillopt: model\.claude_code_exec_path: Claude Code \(.*no-such-dir\/claude\) was not found on PATH/m,
    );
    assert.equal(target.requests.length, 0);
    assert.equal(optimizerRequests(optimizer), 0);
  });

  it('the CLI: a 401 ends `skillopt train` with a non-zero exit and the cause on stderr, the optimizer unpaid', async () => {
    const out = join(base, 'run-cli-401');
    const { code, stdout, stderr } = await skilloptCli(
      [
        'train',
        config,
        '--out',
        out,
        '--cfg-options',
        ...endpointOverrides(target, optimizer, join(base, 'agents')),
      ],
      { ...agentEnv(bin, join(base, 'home')), OPENAI_API_KEY: OPTIMIZER_KEY },
    );
    assert.equal(code, 1, `stdout:\n${stdout}\nstderr:\n${stderr}`);
    assert.match(stderr, /could not answer 2 of 2 items/);
    assert.match(stderr, /not authorised/);
    assert.match(stderr, /Invalid API key/);
    assert.doesNotMatch(stdout, /Finished/);
    assert.ok(target.requests.length > 0);
    assert.equal(optimizerRequests(optimizer), 0);
  });
});
