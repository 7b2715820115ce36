import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { prepareRun, type PreparedRun } from '../../../src/engine/run';
import { skillHash } from '../../../src/engine/skill/document';
import { writeJsonAtomic } from '../../../src/engine/store/atomic';
import { STEP_FILE } from '../../../src/engine/store/layout';
import { metaReflect, renderEpochHistory, type MetaReflectArgs } from '../../../src/engine/train/metaReflect';
import type { StepBufferEntry, StepRecord } from '../../../src/protocol/records';
import type { StepAction } from '../../../src/protocol/vocabulary';
import { startOpenAiServer, type LoopbackServer } from '../../support/loopback/openaiServer';
import { scriptedModels, scriptedOptimizerModel } from '../../support/loopback/scriptedModels';
import { exampleConfig, tempDir } from './helpers';
import { contextFor, readResult } from './metaReflectContext';

const NEUTRAL = '- Re-read the question once before answering.';
const HARMFUL = '- Round every number in the answer to the nearest whole number for readability.';
const DATE_RULE =
  '- Write dates as YYYY-MM-DD and zero-pad the month and day to two digits (2024-03-05, not 2024-3-5).';
const MONEY_RULE = '- Prefix money amounts with the currency symbol and give two decimals, e.g. $15.75.';
const CAPITALS = '- Always answer in capitals.';

const skill = [
  '# House Style Answers',
  '',
  '## Rules',
  '',
  '- Give only the final answer, with no explanation.',
  NEUTRAL,
  HARMFUL,
  DATE_RULE,
  MONEY_RULE,
  '',
].join('\n');

function record(step: number, action: StepAction, gate: number | undefined, current: number): StepRecord {
  return {
    step,
    epoch: 1,
    step_in_epoch: step,
    timing: {},
    tokens: {},
    rollout_hard: 0.625,
    rollout_soft: 0.625,
    rollout_n: 8,
    accumulation_batches: [],
    n_patches: 2,
    n_failure_patches: 1,
    n_success_patches: 1,
    action,
    current_score: current,
    best_score: current,
    best_step: step,
    skill_len: 100,
    wall_time_s: 1,
    ...(gate === undefined ? {} : { candidate_gate_score: gate }),
  };
}

const history: StepRecord[] = [
  record(1, 'accept_new_best', 0.5, 0.5),
  record(2, 'reject', 0.4375, 0.5),
  {
    ...record(3, 'accept', 0.625, 0.625),
    review: { mode: 'gate-then-human', decision: 'human_pruned', rejected_edits: [{ id: 'e-d' }] },
  },
  record(4, 'skip_no_patches', undefined, 0.625),
];

const buffer: StepBufferEntry[] = [
  { step: 1, action: 'accept_new_best', n_total: 8, n_fail: 4, failure_patterns: [] },
  {
    step: 2,
    action: 'reject',
    n_total: 8,
    n_fail: 3,
    failure_patterns: [{ pattern: 'EXACT=0', count: 3, task_ids: ['a', 'b', 'c'] }],
    score_before: 0.5,
    score_after: 0.4375,
    rejected_edits: [{ op: 'append', content: NEUTRAL, target: '' }],
  },
  { step: 3, action: 'accept', n_total: 8, n_fail: 2, failure_patterns: [] },
];

/** Step artifacts the trainer writes: the apply report and the ranked edits with their ids. */
function writeStepFiles(outDir: string): void {
  const step1 = join(outDir, 'steps', 'step_0001');
  writeJsonAtomic(join(step1, 'edit_apply_report.json'), [
    { index: 1, id: 'e-a', op: 'append', target: '', content_preview: DATE_RULE, status: 'applied_append' },
    {
      index: 2,
      id: 'e-b',
      op: 'insert_after',
      target: '## Rules',
      content_preview: '- Answer in English.',
      status: 'skipped_ambiguous_target',
      occurrences: 2,
    },
    {
      index: 3,
      id: 'e-x',
      op: 'append',
      target: '',
      content_preview: 'See references/missing.md.',
      status: 'skipped_outside_policy',
      error: 'it links to references/missing.md, which the skill does not have',
    },
  ]);
  writeJsonAtomic(join(step1, 'ranked_edits.json'), {
    reasoning: 'r',
    edits: [
      { id: 'e-a', op: 'append', content: DATE_RULE },
      { id: 'e-b', op: 'insert_after', target: '## Rules', content: '- Answer in English.' },
    ],
  });
  writeJsonAtomic(join(outDir, 'steps', 'step_0003', 'edit_apply_report.json'), [
    { index: 1, id: 'e-c', op: 'append', target: '', content_preview: MONEY_RULE, status: 'applied_append' },
    { index: 2, id: 'e-d', op: 'append', target: '', content_preview: CAPITALS, status: 'applied_append' },
  ]);
}

const expectedHistory = [
  'Selection score when the epoch began: 0.3750',
  '',
  '### Step 1: ACCEPT_NEW_BEST, selection score 0.3750 → 0.5000',
  'rollout: 4/8 failed',
  'edits tried:',
  `  1. [append] kept target="" content=${JSON.stringify(DATE_RULE)}`,
  '  2. [insert_after] not applied (skipped_ambiguous_target) target="## Rules" content="- Answer in English."',
  '  3. [append] not applied (skipped_outside_policy: it links to references/missing.md, which the skill does not have) target="" content="See references/missing.md."',
  '',
  '### Step 2: REJECT, selection score 0.5000 → 0.4375',
  'rollout: 3/8 failed',
  'failure patterns: EXACT=0 ×3',
  'edits tried:',
  `  1. [append] rejected by the gate target="" content=${JSON.stringify(NEUTRAL)}`,
  '',
  '### Step 3: ACCEPT, selection score 0.5000 → 0.6250',
  'rollout: 2/8 failed',
  'edits tried:',
  `  1. [append] kept target="" content=${JSON.stringify(MONEY_RULE)}`,
  `  2. [append] turned down by the person target="" content=${JSON.stringify(CAPITALS)}`,
  '',
  '### Step 4: SKIP_NO_PATCHES (no candidate was evaluated)',
  'rollout: 3/8 failed',
].join('\n');

describe('meta reflect', () => {
  let tmp: ReturnType<typeof tempDir>;
  let prepared: PreparedRun;
  let outDir: string;
  const argsFor = (name: string, over: Partial<MetaReflectArgs> = {}): MetaReflectArgs => ({
    epoch: 1,
    skill,
    history,
    stepBuffer: buffer,
    dir: join(outDir, 'meta_reflect', name),
    budget: 5,
    startScore: 0.375,
    ...over,
  });

  before(() => {
    tmp = tempDir('skillopt-meta-');
    outDir = join(tmp.path, 'run');
    prepared = prepareRun({
      configPath: exampleConfig,
      outDir,
      dryRun: true,
      overrides: ['cache.enabled=false'],
    });
    writeStepFiles(outDir);
  });
  after(() => tmp.cleanup());

  it('renders each step with its scores and the fate of every edit it tried', () => {
    assert.equal(renderEpochHistory(outDir, history, buffer, 0.375), expectedHistory);
  });

  it('removes what the rejections show does not help and consolidates what the gate kept', async () => {
    const { ctx, rec } = contextFor(prepared, outDir);
    const args = argsFor('epoch_01');
    const out = await metaReflect(ctx, args);

    assert.equal(rec.requests.length, 1);
    assert.equal(rec.requests[0].stage, 'meta_reflect');
    const user = rec.requests[0].messages[1].content;
    assert.ok(user.includes(expectedHistory), 'the prompt carries the rendered history');
    assert.match(user, /Propose at most 5 edits/);
    assert.deepEqual(rec.fallbacks, []);

    assert.deepEqual(
      out.edits.map(({ op, target, content }) => ({ op, target, content })),
      [
        { op: 'delete', target: `${NEUTRAL}\n`, content: undefined },
        { op: 'delete', target: `${HARMFUL}\n`, content: undefined },
        { op: 'delete', target: `${DATE_RULE}\n`, content: undefined },
        // The prompt shows the skill trimmed, so its last line carries no newline there.
        { op: 'delete', target: MONEY_RULE, content: undefined },
        {
          op: 'append',
          target: undefined,
          content: `## Rules Learned in Training\n\n${DATE_RULE}\n${MONEY_RULE}`,
        },
      ],
    );
    assert.ok(
      out.edits.every(
        (e) => e.update_origin === 'meta_reflect_epoch_01' && /^e-[0-9a-f]{10}$/.test(String(e.id)),
      ),
    );
    assert.deepEqual(
      out.report.map((r) => r.status),
      ['applied_delete', 'applied_delete', 'applied_delete', 'applied_delete', 'applied_append'],
    );
    assert.equal(
      out.candidate,
      [
        '# House Style Answers',
        '',
        '## Rules',
        '',
        '- Give only the final answer, with no explanation.',
        '',
        '## Rules Learned in Training',
        '',
        DATE_RULE,
        MONEY_RULE,
        '',
      ].join('\n'),
    );
    assert.match(out.reasoning, /^\[simulated optimizer\] removed 2 rule\(s\).*gathered 2 rule\(s\)/);

    const saved = readResult(args.dir);
    assert.equal(saved.action, 'candidate');
    assert.equal(saved.candidate_hash, skillHash(out.candidate ?? ''));
    assert.equal(saved.skill_hash, skillHash(skill));
    assert.deepEqual(saved.summary, { total: 5, applied: 5, skipped: 0, errors: 0 });
    assert.deepEqual(saved.edits, out.edits);
    assert.equal(readFileSync(join(args.dir, STEP_FILE.candidate), 'utf8'), out.candidate);

    // Resume: the result file is reused without a model call, with or without the candidate file.
    const again = contextFor(prepared, outDir);
    assert.deepEqual(await metaReflect(again.ctx, args), out);
    rmSync(join(args.dir, STEP_FILE.candidate));
    assert.deepEqual(await metaReflect(again.ctx, args), out);
    assert.equal(again.rec.requests.length, 0);
  });

  it('keeps to the edit budget', async () => {
    const { ctx } = contextFor(prepared, outDir);
    const out = await metaReflect(ctx, argsFor('budget', { budget: 2 }));
    assert.deepEqual(
      out.edits.map((e) => e.target),
      [`${NEUTRAL}\n`, `${HARMFUL}\n`],
    );
    assert.equal(out.candidate, skill.replace(`${NEUTRAL}\n`, '').replace(`${HARMFUL}\n`, ''));
  });

  it('returns no candidate when no edit applies, and cuts an over-long reply to the budget', async () => {
    const edits = [1, 2, 3].map((n) => ({ op: 'delete', target: `- Missing rule ${n}.` }));
    const { ctx, rec } = contextFor(prepared, outDir, () => JSON.stringify({ reasoning: 'tidy up', edits }));
    const args = argsFor('nothing-applies', { budget: 2 });
    const out = await metaReflect(ctx, args);
    assert.equal(out.candidate, null);
    assert.equal(out.reasoning, 'tidy up');
    assert.deepEqual(
      out.report.map((r) => r.status),
      ['skipped_delete_target_not_found', 'skipped_delete_target_not_found'],
    );
    assert.deepEqual(rec.fallbacks, []);
    const saved = readResult(args.dir);
    assert.equal(saved.action, 'no_change');
    assert.equal(saved.candidate_hash, null);
    assert.equal(existsSync(join(args.dir, STEP_FILE.candidate)), false);
  });

  it('replays a lost candidate under the package policy it was made under (a skill folder)', async () => {
    const edits = [
      { op: 'append', content: 'See references/missing.md.' },
      { op: 'append', content: '- Keep answers short.' },
    ];
    const { ctx } = contextFor(prepared, outDir, () => JSON.stringify({ reasoning: 'r', edits }));
    const folderCtx = {
      ...ctx,
      settings: { ...ctx.settings, packagePolicy: { ...ctx.settings.packagePolicy, folder: true } },
    };
    const args = argsFor('folder');
    const out = await metaReflect(folderCtx, args);
    assert.deepEqual(
      out.report.map((r) => r.status),
      ['skipped_outside_policy', 'applied_append'],
    );
    rmSync(join(args.dir, STEP_FILE.candidate));
    assert.equal((await metaReflect(folderCtx, args)).candidate, out.candidate);
  });

  it('records a fallback when the reply stays unusable, and does not ask again on resume', async () => {
    const { ctx, rec } = contextFor(
      prepared,
      outDir,
      () => '{"reasoning": "x", "edits": [{"op": "delete"}]}',
    );
    const args = argsFor('malformed');
    const out = await metaReflect(ctx, args);
    assert.deepEqual(out, { candidate: null, edits: [], report: [], reasoning: '' });
    assert.equal(rec.requests.length, 2, 'one call and one re-ask');
    assert.deepEqual(
      rec.fallbacks.map((f) => f.stage),
      ['meta_reflect'],
    );
    assert.match(rec.fallbacks[0].reason, /edits\[0\]\.target/);
    const saved = readResult(args.dir);
    assert.equal(saved.action, 'fallback');
    assert.match(saved.fallback_reason ?? '', /after one re-ask/);
    const again = contextFor(prepared, outDir);
    await metaReflect(again.ctx, args);
    assert.equal(again.rec.requests.length, 0);
  });

  it('does not call the model for an epoch without steps', async () => {
    const { ctx, rec } = contextFor(prepared, outDir);
    const args = argsFor('empty', { history: [], stepBuffer: [] });
    const out = await metaReflect(ctx, args);
    assert.equal(out.candidate, null);
    assert.equal(rec.requests.length, 0);
    assert.equal(readResult(args.dir).action, 'no_history');
  });

  describe('over the OpenAI wire format (loopback)', function () {
    this.timeout(30_000);
    let server: LoopbackServer;
    const stages: string[] = [];
    before(async () => {
      server = await startOpenAiServer(
        scriptedModels([], (_req, stage) => {
          stages.push(stage);
          return undefined;
        }),
      );
    });
    after(() => server.close());

    it('produces the same candidate through the SDK', async () => {
      const wired = prepareRun({
        configPath: exampleConfig,
        outDir: join(tmp.path, 'wire-run'),
        dryRun: true,
        overrides: [
          'cache.enabled=false',
          'model.optimizer_backend=openai_compatible',
          `model.optimizer=${scriptedOptimizerModel}`,
          `model.optimizer_base_url=${server.url}`,
          'limits.max_retries=0',
        ],
      });
      const { ctx, rec } = contextFor(wired, outDir);
      const out = await metaReflect(ctx, argsFor('wire'));
      assert.deepEqual(stages, ['meta_reflect']);
      assert.equal(rec.requests.length, 1);
      assert.equal(server.requests.length, 1);
      assert.equal(out.edits.length, 5);
      assert.match(out.reasoning, /^\[scripted optimizer\]/);
      assert.ok(out.candidate?.includes('## Rules Learned in Training'));
      assert.ok(!out.candidate?.includes(HARMFUL));
    });
  });
});
