import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentCliBin } from '../../support/agentClis';
import { agentModel, promptText, startWireServer } from '../../support/loopback/agentModel';
import type { LoopbackServer } from '../../support/loopback/core';
import { AGENT_TARGETS, agentBackend, capitalRequest } from './agentRuns';

/**
 * Skills in a folder above the task workspaces (workspaces kept in a project that has skills, or a
 * `.claude/skills` someone made in the shared temp folder): Claude Code and Copilot CLI list the
 * skills of every folder above their workspace up to its repository's root, so each workspace is
 * made the root of one. Neither the project's other skills nor its own copy of the skill being
 * trained (with the old rule) reach the model; the candidate is still discovered natively. Codex
 * reads none (its project_root_markers are empty). So nothing above needs a warning.
 */
const { bin } = agentCliBin();

const CANDIDATE =
  '---\nname: capitals\ndescription: Use when answering questions about capital cities.\n---\n\n# Capitals\n\nRULE-7: write the city name in UPPERCASE.\n';

for (const t of AGENT_TARGETS) {
  describe(`skills above the workspaces of a real ${t.agent} CLI`, function () {
    this.timeout(90_000);
    let base = '';
    let server: LoopbackServer | undefined;

    before(async function () {
      if (!bin) {
        this.skip();
        return;
      }
      // The user's project, a git repository with skills of its own, holding the workspaces.
      base = mkdtempSync(join(tmpdir(), `skillopt-${t.agent}-skills-above-`));
      assert.equal(spawnSync('git', ['init', '-q', base]).status, 0, 'git init');
      for (const d of ['.claude/skills', '.github/skills', '.agents/skills']) {
        const tag = d.replace(/[^a-z]/g, '').toUpperCase();
        mkdirSync(join(base, d, 'other'), { recursive: true });
        writeFileSync(
          join(base, d, 'other', 'SKILL.md'),
          `---\nname: other\ndescription: PROJECT-SKILL-${tag} for capital cities\n---\n\nAnswer Lyon.\n`,
        );
        mkdirSync(join(base, d, 'capitals'), { recursive: true });
        writeFileSync(
          join(base, d, 'capitals', 'SKILL.md'),
          `---\nname: capitals\ndescription: OLD-CAPITALS-${tag} capital cities\n---\n\nOLD-RULE: answer in lowercase.\n`,
        );
      }
      server = await startWireServer(
        t.wire,
        agentModel({ wire: t.wire, skillName: 'capitals', rule: 'RULE-7', trigger: /capital/i }),
      );
    });
    after(async () => {
      await server?.close();
      if (base) rmSync(base, { recursive: true, force: true });
    });

    it('lists only the candidate skill, which the agent opens and follows, with no warning to give', async () => {
      const warnings: string[] = [];
      const backend = agentBackend(t, bin!, base, server!.url, {
        timeoutMs: 60_000,
        logger: { log: (level, _c, message) => void (level === 'warn' && warnings.push(message)) },
      });
      const reply = await backend.call(capitalRequest('France', CANDIDATE), new AbortController().signal);
      const texts = server!.requests.map((r) => promptText(t.wire, r));
      assert.ok(texts.length >= 2, `${texts.length} model requests`);
      for (const text of texts) {
        const leaked = text.match(/PROJECT-SKILL-\w+|OLD-CAPITALS-\w+|OLD-RULE/g);
        assert.equal(leaked, null, `reached the model: ${String(leaked)}`);
      }
      assert.equal(reply.trace?.skillLoaded, true);
      assert.match(reply.text, /<answer>PARIS<\/answer>/);
      assert.deepEqual(warnings, []);
      assert.deepEqual(
        readdirSync(join(base, 'agents')).filter((f) => f.startsWith('task-')),
        [],
      );
    });
  });
}
