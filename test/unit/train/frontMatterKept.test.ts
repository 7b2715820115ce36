import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepareRun } from '../../../src/engine/run';
import type { EditReportRow } from '../../../src/engine/skill/applyEdits';
import { parseFrontMatter } from '../../../src/engine/skill/frontMatter';
import type { LoopbackServer } from '../../support/loopback/core';
import { startOpenAiServer } from '../../support/loopback/openaiServer';
import {
  changedSimReply,
  scriptedModels,
  scriptedWireOverrides,
} from '../../support/loopback/scriptedModels';
import { readJson, runSim, tempDir } from './helpers';
import { packageExample } from './packageExample';

/**
 * Issue 17: a trained skill folder must still load in the agents, so no optimizer step may rename the
 * skill or drop its front matter. A chat target's gate cannot see either (the body alone decides its
 * score), so without the guard such a candidate is kept and best_skill/ no longer loads.
 */
describe('training a skill folder keeps the front matter the agents load it by (OpenAI wire, loopback)', function () {
  this.timeout(240_000);
  let root: ReturnType<typeof tempDir>;
  let config: string;
  const servers: LoopbackServer[] = [];

  before(() => {
    root = tempDir('skillopt-fm-');
    config = packageExample(root.path);
  });
  after(async () => {
    for (const s of servers) await s.close();
    root.cleanup();
  });

  async function train(
    out: string,
    overrides: string[],
    override: Parameters<typeof scriptedModels>[1],
  ): Promise<void> {
    const probe = prepareRun({ configPath: config, outDir: join(root.path, 'probe'), dryRun: true });
    const tasks = [...probe.splits.train, ...probe.splits.val, ...probe.splits.test.unsealForEvaluation()];
    const server = await startOpenAiServer(scriptedModels(tasks, override));
    servers.push(server);
    const prepared = prepareRun({
      configPath: config,
      outDir: out,
      overrides: [
        'cache.enabled=false',
        'train.num_epochs=1',
        ...overrides,
        ...scriptedWireOverrides(server.url),
      ],
    });
    const { outcome } = await runSim(prepared);
    assert.equal(outcome.status, 'finished');
  }

  const initialName = (): string =>
    parseFrontMatter(readFileSync(join(root.path, 'house-style-answers', 'SKILL.md'), 'utf8'))!.name!;

  it('refuses a patch edit renaming the skill, records it, and keeps the name in every snapshot', async () => {
    const out = join(root.path, 'patch');
    let injected = 0;
    await train(out, [], (req, stage) => {
      if (stage !== 'analyst' || injected) return undefined;
      injected++;
      return changedSimReply(req, 'analyst', (reply) => {
        const patch = reply.patch as { edits: unknown[] };
        patch.edits = [
          {
            op: 'replace',
            target: `name: ${initialName()}`,
            content: 'name: renamed-skill',
            support_count: 50,
          },
          ...patch.edits,
        ];
      });
    });
    const rows = readdirSync(join(out, 'steps'))
      .map((s) => join(out, 'steps', s, 'edit_apply_report.json'))
      .filter((p) => existsSync(p))
      .flatMap((p) => JSON.parse(readFileSync(p, 'utf8')) as EditReportRow[]);
    const refused = rows.filter((r) => r.status === 'skipped_front_matter');
    assert.equal(refused.length, 1, 'the rename reached the apply report, refused');
    assert.match(refused[0]!.error ?? '', /changes the front-matter name/);
    for (const dir of ['best_skill', ...readdirSync(join(out, 'skills')).filter((n) => !n.endsWith('.md'))]) {
      const skill = readFileSync(
        join(out, dir === 'best_skill' ? dir : join('skills', dir), 'SKILL.md'),
        'utf8',
      );
      assert.equal(parseFrontMatter(skill)?.name, initialName(), dir);
    }
  });

  it('puts back the front matter a rewrite dropped, says so, and keeps the rewritten body', async () => {
    const out = join(root.path, 'rewrite');
    await train(out, ['optimizer.skill_update_mode=rewrite_from_suggestions'], (req, stage) => {
      if (stage !== 'rewrite') return undefined;
      return changedSimReply(req, 'rewrite', (reply) => {
        reply.new_skill = String(reply.new_skill).replace(/^---\n[\s\S]*?\n---\n/, '');
      });
    });
    const results = readdirSync(join(out, 'steps'))
      .map((s) => join(out, 'steps', s, 'rewrite_result.json'))
      .filter((p) => existsSync(p))
      .map((p) => JSON.parse(readFileSync(p, 'utf8')) as { front_matter_restored?: string });
    assert.ok(results.length > 0);
    assert.ok(
      results.every((r) =>
        /removes or breaks the SKILL\.md front matter/.test(r.front_matter_restored ?? ''),
      ),
    );
    const history = readJson<Array<{ action: string }>>(out, 'history.json');
    assert.ok(
      history.some((r) => r.action.startsWith('accept')),
      'a rewrite was kept',
    );
    const best = readFileSync(join(out, 'best_skill', 'SKILL.md'), 'utf8');
    assert.equal(parseFrontMatter(best)?.name, initialName());
    assert.notEqual(best, readFileSync(join(root.path, 'house-style-answers', 'SKILL.md'), 'utf8'));
  });
});
