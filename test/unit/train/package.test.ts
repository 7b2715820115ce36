import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepareRun, type PreparedRun } from '../../../src/engine/run';
import type { EditReportRow } from '../../../src/engine/skill/applyEdits';
import { RunLayout } from '../../../src/engine/store/layout';
import { artifactSchemas, readArtifact } from '../../../src/engine/store/runSchemas';
import type { StepRecord } from '../../../src/protocol/records';
import { startAnthropicServer } from '../../support/loopback/anthropicServer';
import { contentText, type LoopbackServer } from '../../support/loopback/core';
import { openAiMessages, startOpenAiServer } from '../../support/loopback/openaiServer';
import {
  changedSimReply,
  scriptedModels,
  scriptedOptimizerModel,
  scriptedTargetModel,
  scriptedWireOverrides,
} from '../../support/loopback/scriptedModels';
import { comparableHistory, readJson, runSim, spend, tempDir, trainUntilKilled } from './helpers';
import { bothFileSteps, filesOf, GUIDE, LOGO, packageExample } from './packageExample';

function prepare(config: string, outDir: string, overrides: string[] = []): PreparedRun {
  return prepareRun({ configPath: config, outDir, overrides: ['cache.enabled=false', ...overrides] });
}

describe('training a skill folder (package)', function () {
  this.timeout(240_000);
  let root: ReturnType<typeof tempDir>;
  let config: string;
  let reference: string;

  before(async () => {
    root = tempDir('skillopt-pkg-');
    config = packageExample(root.path);
    reference = join(root.path, 'reference');
    const { outcome } = await runSim(prepare(config, reference));
    assert.equal(outcome.status, 'finished');
  });
  after(() => root.cleanup());

  it('edits SKILL.md and the reference file in one gated candidate, and snapshots folders', () => {
    const steps = bothFileSteps(reference);
    assert.ok(steps.length > 0, 'some candidate edited both files');
    const history = readJson<StepRecord[]>(reference, 'history.json');
    const gated = history.filter((r) => steps.includes(r.step));
    assert.ok(
      gated.every((r) => typeof r.candidate_gate_score === 'number'),
      'each such candidate was gated',
    );
    const step = steps[0]!;
    const stepDir = new RunLayout(reference).stepDir(step);
    // The candidate: SKILL.md for one-file readers, the whole package beside it, and per-file diffs.
    assert.ok(existsSync(join(stepDir, 'candidate_skill', GUIDE)));
    const files = readArtifact<Array<{ path: string; status: string; diff: string }>>(
      join(stepDir, 'candidate_files.json'),
      artifactSchemas.candidateFiles,
    )!;
    assert.deepEqual(
      files.map((f) => [f.path, f.status]),
      [
        ['SKILL.md', 'changed'],
        [GUIDE, 'changed'],
      ],
    );
    assert.match(files[1]!.diff, /^\+/m);
    // Snapshots and the best skill are folders with every file, the binary one byte for byte.
    for (const dir of [join(reference, 'skills', 'skill_v0000'), join(reference, 'best_skill')]) {
      assert.deepEqual([...readFileSync(join(dir, 'assets', 'logo.png'))], [...LOGO]);
      assert.ok(existsSync(join(dir, GUIDE)));
      assert.equal(readFileSync(join(dir, 'SKILL.md'), 'utf8'), readFileSync(`${dir}.md`, 'utf8'));
    }
    const best = readFileSync(join(reference, 'best_skill', GUIDE), 'utf8');
    const initial = readFileSync(join(reference, 'skills', 'skill_v0000', GUIDE), 'utf8');
    // Provenance per file: the kept lines of the reference file name it and the step that wrote them.
    const provenance = readJson<Array<{ file?: string; step: number }>>(reference, 'provenance.json');
    assert.ok(provenance.some((r) => r.file === GUIDE && steps.includes(r.step)));
    const { report } = readJson<{ report: { kept_lines: Array<{ file?: string }> } }>(
      reference,
      'summary.json',
    );
    assert.ok(report.kept_lines.some((k) => k.file === GUIDE));
    assert.ok(report.kept_lines.some((k) => k.file === undefined));
    assert.match(readFileSync(join(reference, 'report.md'), 'utf8'), /\| references\/style-guide\.md:\d+ \|/);
    // A candidate with a reference-file edit was accepted: the best skill's guide is not the initial one.
    assert.ok(history.some((r) => steps.includes(r.step) && r.action.startsWith('accept')));
    assert.notEqual(best, initial);
  });

  for (const when of ['gate', 'verdict'] as const) {
    it(`resumes after a stop ${when === 'gate' ? 'in' : 'after'} the gate of a package candidate with the same result`, async () => {
      const step = bothFileSteps(reference)[0]!;
      const out = join(root.path, `resumed-${when}`);
      const first = await runSim(prepare(config, out), (e, all) =>
        when === 'gate'
          ? e.type === 'rollout/progress' &&
            e.step === step &&
            e.stage === 'evaluate' &&
            all.filter((x) => x.type === 'rollout/progress' && x.step === step && x.stage === 'evaluate')
              .length >= 3
          : e.type === 'gate/verdict' && e.step === step,
      );
      assert.equal(first.outcome.status, 'stopped');
      const second = await runSim(prepare(config, out));
      assert.equal(second.outcome.status, 'finished');
      assert.deepEqual(comparableHistory(out), comparableHistory(reference));
      assert.deepEqual(filesOf(join(out, 'best_skill')), filesOf(join(reference, 'best_skill')));
      assert.deepEqual(spend(out), spend(reference));
    });
  }

  it('resumes after the CLI process is killed with SIGKILL once a package candidate is written', async () => {
    const step = bothFileSteps(reference)[0]!;
    const probe = prepareRun({ configPath: config, dryRun: true, outDir: join(root.path, 'probe') });
    const tasks = [...probe.splits.train, ...probe.splits.val, ...probe.splits.test.unsealForEvaluation()];
    const server = await startOpenAiServer(scriptedModels(tasks), { latencyMs: 25 });
    const wire = ['cache.enabled=false', ...scriptedWireOverrides(server.url)];
    const out = join(root.path, 'killed');
    try {
      await trainUntilKilled(config, out, wire, (e) => e.type === 'candidate/ready' && e.step === step);
      assert.ok(existsSync(join(new RunLayout(out).stepDir(step), 'candidate_skill', GUIDE)));
      const second = await runSim(prepare(config, out, wire.slice(1)));
      assert.equal(second.outcome.status, 'finished');
      assert.deepEqual(comparableHistory(out), comparableHistory(reference));
      assert.deepEqual(filesOf(join(out, 'best_skill')), filesOf(join(reference, 'best_skill')));
      // No half-written snapshot folder is left behind.
      assert.deepEqual(
        readdirSync(join(out, 'skills')).filter((n) => n.includes('.tmp-')),
        [],
      );
    } finally {
      await server.close();
    }
  });
});

describe('training a skill folder over the SDK wires (loopback)', function () {
  this.timeout(240_000);
  let root: ReturnType<typeof tempDir>;
  let config: string;
  const servers: LoopbackServer[] = [];

  before(() => {
    root = tempDir('skillopt-pkg-wire-');
    config = packageExample(root.path);
  });
  after(async () => {
    for (const s of servers) await s.close();
    root.cleanup();
  });

  function tasks(): Parameters<typeof scriptedModels>[0] {
    const probe = prepareRun({ configPath: config, outDir: join(root.path, 'probe'), dryRun: true });
    return [...probe.splits.train, ...probe.splits.val, ...probe.splits.test.unsealForEvaluation()];
  }

  for (const wire of ['openai', 'anthropic'] as const) {
    it(`trains, refuses a write outside the policy, and resumes over the ${wire} wire`, async () => {
      const all = tasks();
      let injected = 0;
      const handler = scriptedModels(all, (req, stage) => {
        if (injected || stage !== 'analyst') return undefined;
        const user = openAiMessages(req).find((m) => m.role === 'user');
        if (!/Failed Trajectories/.test(contentText(user?.content))) return undefined;
        injected++;
        // A new-script edit first, backed strongly enough to be ranked in.
        return changedSimReply(req, 'analyst', (reply) => {
          const patch = reply.patch as { edits: unknown[] };
          patch.edits = [
            { op: 'append', file: 'scripts/check.sh', content: 'echo check', support_count: 50 },
            ...patch.edits,
          ];
        });
      });
      const server =
        wire === 'openai' ? await startOpenAiServer(handler) : await startAnthropicServer(handler);
      servers.push(server);
      const overrides = [
        'train.num_epochs=1',
        ...(wire === 'openai'
          ? scriptedWireOverrides(server.url)
          : scriptedWireOverrides(server.origin, 'anthropic')),
      ];
      const out = join(root.path, wire);
      const first = await runSim(
        prepare(config, out, overrides),
        (e) => e.type === 'gate/verdict' && e.step === 2,
      );
      assert.equal(first.outcome.status, 'stopped');
      const second = await runSim(prepare(config, out, overrides));
      assert.equal(second.outcome.status, 'finished');
      // Both roles spoke this wire: the optimizer saw the package listing, the target the reference file.
      const bodies = server.requests.map((r) => JSON.stringify(r.body));
      assert.ok(bodies.some((b) => b.includes(scriptedOptimizerModel) && b.includes('<skill_package>')));
      assert.ok(
        bodies.some(
          (b) =>
            b.includes(scriptedTargetModel) &&
            b.includes(JSON.stringify(`<skill_file path="${GUIDE}">`).slice(1, -1)),
        ),
      );
      assert.ok(bothFileSteps(out).length > 0, 'a candidate edited SKILL.md and the reference file');
      const refused = readdirSync(join(out, 'steps'))
        .map((s) => join(out, 'steps', s, 'edit_apply_report.json'))
        .filter((p) => existsSync(p))
        .flatMap((p) => JSON.parse(readFileSync(p, 'utf8')) as EditReportRow[])
        .filter((r) => r.status === 'skipped_outside_policy');
      assert.equal(refused.length, 1, 'the script edit reached the apply report');
      assert.equal(refused[0]!.file, 'scripts/check.sh');
      assert.match(refused[0]!.error ?? '', /not editable under optimizer\.package_edits\.editable/);
      assert.equal(existsSync(join(out, 'best_skill', 'scripts')), false);
      const history = readJson<StepRecord[]>(out, 'history.json');
      assert.ok(
        history.some((r) => (r.edit_apply_summary?.skipped ?? 0) > 0),
        'the step record counts it skipped',
      );
    });
  }
});
