import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { stepArtifacts } from '../../../src/engine/store/runReader';
import { join } from 'node:path';
import { conflictsWithin, detectConflicts } from '../../../src/engine/train/conflicts';
import { lineOrigins, type ProvenanceRecord } from '../../../src/engine/train/provenance';
import type { RunReport } from '../../../src/engine/train/report';
import type { TestCheck } from '../../../src/protocol/records';
import type { StepRecord } from '../../../src/protocol/records';
import { comparableHistory, prepareSim, read, readJson, runSim, tempDir } from './helpers';
import type { EngineEvent } from '../../../src/protocol/events';
import { isSkipped } from '../../../src/protocol/vocabulary';
import { stepEdits } from '../../../src/extension/review/runFiles';

describe('mechanisms beyond the reference code', function () {
  this.timeout(60_000);
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir('skillopt-mech-');
  });
  afterEach(() => dir.cleanup());

  it('writes report.md and summary.report whose figures match history.json, with the unfixable tasks listed', async () => {
    await runSim(prepareSim(dir.path));
    const history = readJson<StepRecord[]>(dir.path, 'history.json');
    const { report } = readJson<{ report: RunReport }>(dir.path, 'summary.json');
    const applied = history.reduce((n, r) => n + (r.edit_apply_summary?.applied ?? 0), 0);
    const kept = history
      .filter((r) => r.action.includes('accept'))
      .reduce((n, r) => n + (r.edit_apply_summary?.applied ?? 0), 0);
    assert.equal(report.edits.applied, applied);
    assert.equal(report.edits.kept, kept);
    assert.equal(report.steps.accepted, history.filter((r) => r.action.includes('accept')).length);
    assert.equal(report.steps.rejected, history.filter((r) => r.action === 'reject').length);
    assert.deepEqual(
      report.edit_budget.map((b) => b.budget),
      history.map((r) => r.edit_budget ?? null),
    );
    assert.deepEqual(
      report.persistent_failures.map((p) => p.id),
      ['capital-013', 'capital-014'],
    );
    assert.ok(report.kept_lines.length > 0);
    assert.ok(report.spend_by_role.target!.calls > 0 && report.spend_by_role.optimizer!.calls > 0);
    const md = read(dir.path, 'report.md');
    assert.match(md, /Simulated models/);
    assert.match(md, /capital-013/);
    assert.match(md, /Where the kept lines came from/);
    // The sealed test split with its uncertainty, and whether the selection gain shows on it.
    const check = readJson<{ test_check?: TestCheck }>(dir.path, 'summary.json').test_check;
    assert.ok(check?.intervals.best && check.intervals.initial, JSON.stringify(check));
    assert.equal(report.test_check?.verdict, check.verdict);
    assert.match(md, /Test scores, 95% intervals \(Wilson\): initial \[/);
  });

  it('records where every kept line came from, and traces best-skill lines to their step', async () => {
    await runSim(prepareSim(dir.path));
    const records = readJson<ProvenanceRecord[]>(dir.path, 'provenance.json');
    const history = readJson<StepRecord[]>(dir.path, 'history.json');
    assert.ok(records.length > 0);
    for (const r of records) {
      const step = history.find((h) => h.step === r.step)!;
      assert.ok(step.action.includes('accept'), `provenance for a step that was not accepted (${r.step})`);
      assert.ok(r.minibatches.length > 0 && r.trajectory_ids.length > 0);
    }
    const origins = lineOrigins(read(dir.path, 'best_skill.md'), records);
    assert.ok(origins.some((o) => /zero-pad/.test(o.text)));
  });

  it('keeps a conflict flag only while the other edit is in the candidate', () => {
    assert.deepEqual(conflictsWithin(['b', 'c'], [{ id: 'a' }, { id: 'b' }]), { conflicts_with: ['b'] });
    assert.deepEqual(conflictsWithin(['c'], [{ id: 'a' }]), {});
    assert.deepEqual(conflictsWithin(undefined, [{ id: 'a' }]), {});
  });

  it('flags merged edits that pull the same rule in opposite directions', () => {
    const conflicts = detectConflicts([
      { id: 'a', op: 'append', content: '- Always include the unit after converted distances.' },
      { id: 'b', op: 'append', content: '- Never include the unit after converted distances.' },
      { id: 'c', op: 'delete', target: '- Give only the final answer.' },
      {
        id: 'd',
        op: 'replace',
        target: '- Give only the final answer.',
        content: '- Give only the final answer, no prose.',
      },
      { id: 'e', op: 'append', content: '- Write dates as YYYY-MM-DD.' },
    ]);
    assert.deepEqual(
      conflicts.map((c) => [c.a, c.b, c.kind]),
      [
        ['a', 'b', 'opposite_polarity'],
        ['c', 'd', 'delete_vs_change'],
      ],
    );
  });

  it('stops early after `patience` gated steps without improvement and still finishes with the final evaluation', async () => {
    const prepared = prepareSim(dir.path, ['evaluation.patience=2', 'train.num_epochs=3']);
    const { outcome, events } = await runSim(prepared);
    assert.equal(outcome.status, 'finished');
    assert.match(outcome.reason ?? '', /patience 2/);
    const history = readJson<StepRecord[]>(dir.path, 'history.json');
    assert.ok(history.length < 12, 'ran every step despite patience');
    assert.ok(existsSync(join(dir.path, 'test_eval', 'summary.json')));
    const finished = events.find((e) => e.type === 'run/finished');
    assert.ok(finished?.type === 'run/finished' && /patience/.test(finished.stoppedEarly ?? ''));
    // The reason is in the run folder too, not only in the event.
    const summary = readJson<{ stopped_early?: string }>(dir.path, 'summary.json');
    assert.equal(summary.stopped_early, outcome.reason);
    assert.match(readFileSync(join(dir.path, 'report.md'), 'utf8'), /^Stopped early: .*patience 2.*\.$/m);
  });

  it('counts a force-accepted step that beats the best as an improvement for patience (use_gate: false)', async () => {
    const { outcome, events } = await runSim(
      prepareSim(dir.path, ['evaluation.use_gate=false', 'evaluation.patience=1', 'train.num_epochs=2']),
    );
    // No gate, so no power check to state: the start and the report say the gate is off instead.
    const started = events.find((e) => e.type === 'run/started');
    assert.ok(started?.type === 'run/started' && started.gateOff && !started.gatePower);
    assert.match(
      readFileSync(join(dir.path, 'report.md'), 'utf8'),
      /^Gate: off \(evaluation\.use_gate: false\)/m,
    );
    assert.equal(readJson<{ gate_power?: unknown }>(dir.path, 'summary.json').gate_power, undefined);
    // Gated steps only (a skipped step has no candidate); each force-accepted, some the new best.
    const gated = readJson<StepRecord[]>(dir.path, 'history.json').filter((r) => !isSkipped(r.action));
    assert.ok(gated.every((r) => r.action === 'force_accept'));
    const improved = gated.filter((r) => r.best_step === r.step);
    assert.ok(improved.length > 0, 'no force-accepted step became the best: the test shows nothing');
    const last = gated[gated.length - 1]!;
    assert.match(outcome.reason ?? '', /patience 1/);
    // Patience 1 stops after the first gated step that is not a new best, and only then.
    assert.notEqual(last.best_step, last.step, `stopped right after step ${last.step}, a new best`);
    assert.deepEqual(
      gated.slice(0, -1).map((r) => r.best_step === r.step),
      gated.slice(0, -1).map(() => true),
    );
  });

  it('shrinks the next edit budget after a rejection when decay_on_reject is on', async () => {
    const off = tempDir('skillopt-mech-off-');
    try {
      await runSim(
        prepareSim(off.path, [
          'optimizer.lr_scheduler=constant',
          'optimizer.learning_rate=3',
          'optimizer.min_learning_rate=1',
        ]),
      );
      await runSim(
        prepareSim(dir.path, [
          'optimizer.lr_scheduler=constant',
          'optimizer.learning_rate=3',
          'optimizer.min_learning_rate=1',
          'optimizer.decay_on_reject=true',
        ]),
      );
      const base = readJson<StepRecord[]>(off.path, 'history.json');
      const decayed = readJson<StepRecord[]>(dir.path, 'history.json');
      assert.ok(base.filter((r) => r.edit_budget !== undefined).every((r) => r.edit_budget === 3));
      const firstReject = decayed.findIndex((r) => r.action === 'reject');
      assert.ok(firstReject >= 0);
      const next = decayed.slice(firstReject + 1).find((r) => r.edit_budget !== undefined);
      assert.ok(next, 'no gated step after the rejection');
      assert.equal(next.edit_budget, 2);
    } finally {
      off.cleanup();
    }
  });

  it('accumulates several rollout micro-batches per step (batch_K folders)', async () => {
    await runSim(prepareSim(dir.path, ['train.accumulation=2', 'train.batch_size=4', 'train.num_epochs=1']));
    const history = readJson<StepRecord[]>(dir.path, 'history.json');
    assert.equal(history[0]!.accumulation_batches.length, 2);
    assert.equal(history[0]!.rollout_n, 8);
    assert.ok(existsSync(join(dir.path, 'steps', 'step_0001', 'batch_0', 'rollout', 'results.jsonl')));
    assert.ok(existsSync(join(dir.path, 'steps', 'step_0001', 'batch_1', 'patches')));
    // The runs tree lists the failed tasks of every micro-batch, each with its conversation.
    const failedRows = [0, 1].flatMap((k) =>
      readFileSync(join(dir.path, 'steps', 'step_0001', `batch_${k}`, 'rollout', 'results.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { id: string; hard: number })
        .filter((r) => !r.hard),
    );
    const listed = stepArtifacts(dir.path, 1).failedTrajectories;
    assert.ok(failedRows.length > 0);
    assert.deepEqual(listed.map((f) => f.id).sort(), failedRows.map((r) => r.id).sort());
    for (const f of listed) assert.ok(existsSync(f.path), f.path);
  });

  it('runs deep reflection when configured and saves its transcript with the step', async () => {
    const { events } = await runSim(
      prepareSim(dir.path, [
        'gradient.use_deep_reflect=true',
        'gradient.deep_reflect_every_step=true',
        'train.num_epochs=1',
      ]),
    );
    assert.ok(events.some((e) => e.type === 'stage/started' && e.stage === 'deep_reflect'));
    const transcript = readJson<{ outcome?: unknown; rounds?: unknown[] }>(
      dir.path,
      'steps',
      'step_0001',
      'deep_reflect.json',
    );
    assert.ok(transcript.outcome, 'no outcome in deep_reflect.json');
    const first = readJson<StepRecord[]>(dir.path, 'history.json')[0]!;
    const fromAnalysts = first.accumulation_batches.reduce(
      (n, b) => n + b.n_failure_patches + b.n_success_patches,
      0,
    );
    assert.equal(
      first.n_patches,
      fromAnalysts + 1,
      'the deep-reflection patch did not join the analysts’ patches',
    );
  });

  it('gates a meta-reflect candidate at each epoch end when configured', async () => {
    const { events } = await runSim(prepareSim(dir.path, ['optimizer.use_meta_reflect=true']));
    const verdicts = events.filter((e) => e.type === 'gate/verdict' && e.origin === 'meta_reflect');
    const gate1 = readJson<{ action: string }>(dir.path, 'meta_reflect', 'epoch_01', 'gate_result.json');
    assert.ok(existsSync(join(dir.path, 'meta_reflect', 'epoch_01', 'meta_reflect_result.json')));
    assert.equal(verdicts.length > 0, gate1.action !== 'no_candidate');
  });

  it('with every mechanism off, makes the same decisions as the default run', async () => {
    const other = tempDir('skillopt-mech-off-');
    try {
      await runSim(prepareSim(dir.path));
      await runSim(
        prepareSim(other.path, [
          'evaluation.patience=0',
          'optimizer.decay_on_reject=false',
          'train.accumulation=1',
          'gradient.use_deep_reflect=false',
          'optimizer.use_meta_reflect=false',
        ]),
      );
      assert.deepEqual(comparableHistory(other.path), comparableHistory(dir.path));
    } finally {
      other.cleanup();
    }
  });
});

describe('conflicting edits reach the review', function () {
  this.timeout(60_000);
  it('flags both edits in merged_patch.json and on the candidate the review shows', async () => {
    const dir = tempDir('skillopt-conflicts-');
    try {
      const prepared = prepareSim(dir.path, ['train.num_epochs=1', 'optimizer.learning_rate=10']);
      // The optimizer's merges gain two edits that pull one rule in opposite directions.
      const inner = prepared.models.optimizer;
      prepared.models.optimizer = {
        ...inner,
        chat: async (req, signal) => {
          const reply = await inner.chat(req, signal);
          if (req.stage !== 'merge') return reply;
          const body = JSON.parse(/```json\n([\s\S]*)\n```/.exec(reply.text)![1]!) as { edits: unknown[] };
          body.edits.push(
            { op: 'append', content: '- Always include the unit after converted distances.' },
            { op: 'append', content: '- Never include the unit after converted distances.' },
          );
          return { ...reply, text: '```json\n' + JSON.stringify(body) + '\n```' };
        },
      };
      const { events } = await runSim(prepared);
      const merged = readJson<{ conflicts?: Array<{ a: string; b: string; kind: string }> }>(
        dir.path,
        'steps',
        'step_0001',
        'merged_patch.json',
      );
      assert.deepEqual(
        merged.conflicts?.map((c) => c.kind),
        ['opposite_polarity'],
      );
      const ready = events.find(
        (e): e is Extract<EngineEvent, { type: 'candidate/ready' }> => e.type === 'candidate/ready',
      )!;
      const flagged = ready.edits.filter((e) => e.conflicts_with?.length);
      assert.deepEqual(
        flagged.map((e) => e.content),
        [
          '- Always include the unit after converted distances.',
          '- Never include the unit after converted distances.',
        ],
      );
      assert.deepEqual(flagged[0]!.conflicts_with, [flagged[1]!.id]);
      assert.deepEqual(flagged[1]!.conflicts_with, [flagged[0]!.id]);
      // Read back from the run folder, as the review of a finished run does.
      assert.deepEqual(
        stepEdits(dir.path, 1)
          .filter((e) => e.conflicts_with?.length)
          .map((e) => e.id),
        flagged.map((e) => e.id),
      );
    } finally {
      dir.cleanup();
    }
  });
});
