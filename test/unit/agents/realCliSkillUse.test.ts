import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_FILE } from '../../../src/engine/store/layout';
import { runSim } from '../train/helpers';
import { AGENT_TARGETS, AgentRunFixture } from './agentRuns';

/**
 * A skill whose description never makes the real agent open it: the run says so after the
 * baseline (before the optimizer is paid for steps that cannot help) and in report.md.
 */
const claude = AGENT_TARGETS.find((t) => t.agent === 'claude')!;

describe('a training run whose real Claude Code target never opens the skill', function () {
  this.timeout(300_000);
  const f = AgentRunFixture.use(claude, 'skillopt-agent-skill-use-', undefined);
  before(function () {
    if (!f.base) return this.skip();
    // The loopback agent loads a listed skill only when its description is about capitals.
    const skill = join(f.base, 'project', 'SKILL.md');
    writeFileSync(
      skill,
      readFileSync(skill, 'utf8').replace(
        /^description: .*$/m,
        'description: Use when formatting spreadsheets.',
      ),
    );
  });

  it('warns after the baseline selection and says it in report.md, with what to fix', async () => {
    const prepared = f.prepare('run');
    const { outcome, events } = await runSim(prepared);
    assert.equal(outcome.status, 'finished');
    const warnings = events.flatMap((e) => (e.type === 'warning' ? [e.message] : []));
    const baseline = events.findIndex((e) => e.type === 'baseline/scored');
    const warned = events.findIndex(
      (e) =>
        e.type === 'warning' &&
        e.message.startsWith('baseline selection: the agent opened the skill in 0 of 2'),
    );
    assert.ok(warned > baseline && baseline >= 0, warnings.join('\n'));
    assert.match(warnings.join('\n'), /model\.target_delivery: pointer/);
    const md = readFileSync(join(prepared.outDir, RUN_FILE.report), 'utf8');
    assert.match(md, /^The agent opened the skill in 0 of \d+ run\(s\) \(0%\)\. An edit cannot change/m);
  });
});
