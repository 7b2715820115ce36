import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskItem } from '../../../src/engine/data/tasks';
import { SkillOptError } from '../../../src/engine/errors';
import { prepareRun, trainPrepared, type PreparedRun } from '../../../src/engine/run';
import { contentText, type LoopbackServer } from '../../support/loopback/core';
import { openAiMessages, startOpenAiServer } from '../../support/loopback/openaiServer';
import { scriptedModels, scriptedWireOverrides } from '../../support/loopback/scriptedModels';
import { exampleConfig, runSim, tempDir } from './helpers';

/**
 * report.md's reliability section counts re-asked structured replies, and a run that stops part
 * way (errored target items, a cap, a stop) still writes report.md, headed as a stopped run's.
 */
const ledgerRows = (dir: string): Array<Record<string, unknown>> =>
  readFileSync(join(dir, 'ledger.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

const report = (dir: string): string => readFileSync(join(dir, 'report.md'), 'utf8');

describe('report.md: re-asks, and the report of a stopped run (OpenAI wire, loopback)', function () {
  this.timeout(120_000);
  let all: TaskItem[];
  let dir: ReturnType<typeof tempDir>;
  const servers: LoopbackServer[] = [];

  before(() => {
    const probe = prepareRun({ configPath: exampleConfig, outDir: '/tmp/unused', dryRun: true });
    all = [...probe.splits.train, ...probe.splits.val, ...probe.splits.test.unsealForEvaluation()];
  });
  beforeEach(() => {
    dir = tempDir('skillopt-stopreport-');
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
    dir.cleanup();
  });

  const prepare = (url: string, overrides: string[] = []): PreparedRun =>
    prepareRun({
      configPath: exampleConfig,
      outDir: dir.path,
      overrides: ['cache.enabled=false', ...scriptedWireOverrides(url), 'limits.max_retries=0', ...overrides],
      models: { keys: { openai: 'sk-test-not-a-real-key' }, env: {} },
    });

  /** Every third analyst reply (not counting re-asks) is not JSON; counts the ones served. */
  async function reaskingServer(): Promise<{ server: LoopbackServer; served: () => number }> {
    let analyst = 0;
    let unusable = 0;
    const server = await startOpenAiServer(
      scriptedModels(all, (req, stage) => {
        if (stage !== 'analyst') return undefined;
        const last = openAiMessages(req).at(-1);
        if (contentText(last?.content).startsWith('That reply could not be used')) return undefined;
        if (++analyst % 3 !== 1) return undefined;
        unusable++;
        return { kind: 'reply', text: 'I think the skill should mention dates more clearly.' };
      }),
    );
    servers.push(server);
    return { server, served: () => unusable };
  }

  it('counts every re-asked reply in the reliability section, across a stop and a resume', async () => {
    const { server, served } = await reaskingServer();
    const first = await runSim(
      prepare(server.url), // After step 2's update: no optimizer call is in flight, so every reply served was read.
      (e) => e.type === 'stage/finished' && e.step === 2 && e.stage === 'update',
    );
    assert.equal(first.outcome.status, 'stopped');
    const before = served();
    assert.ok(before > 0, 'a reply was asked again before the stop');
    assert.match(report(dir.path), /^# SkillOpt run report \(stopped run\)/);
    assert.match(
      report(dir.path),
      new RegExp(
        `Structured replies asked again \\(unusable the first time\\): ${before} \\(analyst ×${before}\\)`,
      ),
    );
    const second = await runSim(prepare(server.url));
    assert.equal(second.outcome.status, 'finished');
    const total = served();
    assert.ok(total > before);
    const text = report(dir.path);
    assert.match(text, /^# SkillOpt run report\n/, 'the finished run replaced the stopped report');
    assert.match(
      text,
      new RegExp(
        `Structured replies asked again \\(unusable the first time\\): ${total} \\(analyst ×${total}\\)`,
      ),
    );
    assert.equal(ledgerRows(dir.path).filter((r) => r.kind === 'reask').length, total);
    const summary = JSON.parse(readFileSync(join(dir.path, 'summary.json'), 'utf8')) as {
      report: { reliability: { reasks: Record<string, number> } };
    };
    assert.deepEqual(summary.report.reliability.reasks, { analyst: total });
  });

  it('a run stopped by errored target items writes report.md with the errored calls by cause', async () => {
    const server = await startOpenAiServer(
      scriptedModels(all, (_req, stage) =>
        stage === 'target'
          ? { kind: 'status', status: 401, message: 'Incorrect API key provided' }
          : undefined,
      ),
    );
    servers.push(server);
    await assert.rejects(runSim(prepare(server.url)), (err: unknown) => SkillOptError.is(err, 'target'));
    const text = report(dir.path);
    assert.match(text, /^# SkillOpt run report \(stopped run\)/);
    assert.match(text, /Stopped before its end:\*\* failed: .*the target could not answer \d+ of \d+ items/);
    assert.match(text, /## Reliability/);
    assert.match(
      text,
      /The target could not answer (\d+) evaluation\(s\) \(not authorised \(check the key\) ×\1\)/,
    );
    assert.match(text, /Calls that failed after every attempt: .*target [1-9]/);
    assert.match(text, /\| initial \| – \| – \|/, 'a score never reached is not shown as -1');
  });

  it('a run stopped by a cap writes report.md; a folder it refused to use gets none', async () => {
    const { server } = await reaskingServer();
    const { outcome } = await runSim(prepare(server.url, ['limits.max_tokens=20000']));
    assert.equal(outcome.status, 'stopped');
    const text = report(dir.path);
    assert.match(text, /^# SkillOpt run report \(stopped run\)/);
    assert.match(
      text,
      new RegExp(
        `Stopped before its end:\\*\\* ${outcome.reason!.slice(0, 20).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`,
      ),
    );
    assert.match(text, /## Reliability/);
    assert.match(text, /## Spend by role/);

    const empty = tempDir('skillopt-stopreport-empty-');
    try {
      const refused = prepareRun({
        configPath: exampleConfig,
        outDir: empty.path,
        overrides: ['cache.enabled=false'],
      });
      await assert.rejects(
        trainPrepared(refused, {
          emit: () => undefined,
          signal: new AbortController().signal,
          resumeCommand: 'resume',
          requireResume: true,
        }),
        /no run to resume/,
      );
      assert.equal(existsSync(join(empty.path, 'report.md')), false);
    } finally {
      empty.cleanup();
    }
  });
});
