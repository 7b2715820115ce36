import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, sep } from 'node:path';
import { loadTasks } from '../../../src/engine/data/tasks';
import { prepareRun, trainPrepared } from '../../../src/engine/run';
import { parseFrontMatter } from '../../../src/engine/skill/frontMatter';
import type { EngineEvent } from '../../../src/protocol/events';
import type { ActivationRecord } from '../../../src/protocol/records';
import { agentCliBin } from '../../support/agentClis';
import { agentModel, type AgentWire } from '../../support/loopback/agentModel';
import { startAnthropicServer } from '../../support/loopback/anthropicServer';
import type { LoopbackServer } from '../../support/loopback/core';
import { startOpenAiServer } from '../../support/loopback/openaiServer';
import { startResponsesServer } from '../../support/loopback/responsesServer';
import { scriptedModels, scriptedOptimizerModel } from '../../support/loopback/scriptedModels';

/**
 * Done when (issue 17): a description that does not trigger on its should-trigger queries is
 * improved on the activation track against a real agent CLI (Claude Code, Codex, Copilot CLI) over
 * a loopback server speaking its wire, and the held-out trigger rate is in the report. The loopback model opens the skill when
 * the description Claude Code lists shares a word with the user's request, as a model would; the
 * optimizer (real OpenAI SDK, loopback server) adds the words of the missed requests.
 */
const { bin, missing } = agentCliBin();

const SHOULD = ['France', 'Japan', 'Italy', 'Peru', 'Kenya'].map((c) => `What is the capital of ${c}?`);
const SHOULD_NOT = [
  'Write a haiku about autumn leaves.',
  'Explain recursion in Python.',
  'Translate hello into Spanish.',
];
const words = (s: string): string[] => s.toLowerCase().match(/[a-z]{5,}/g) ?? [];

/** The request in the prompt, if it is one of ours, and whether the description shares a word with it. */
function matches(description: string, text: string): boolean {
  const query = [...SHOULD, ...SHOULD_NOT].find((q) => text.includes(q));
  if (!query) return false;
  const described = new Set(words(description));
  return words(query).some((w) => described.has(w));
}

const AGENTS: Array<{
  name: string;
  backend: string;
  wire: AgentWire;
  skillRoot: string;
  keys: Record<string, string>;
}> = [
  {
    name: 'Claude Code CLI',
    backend: 'claude_code_exec',
    wire: 'anthropic',
    skillRoot: '.claude/skills',
    keys: { ANTHROPIC_API_KEY: 'fake-anthropic-key' },
  },
  { name: 'Codex CLI', backend: 'codex_exec', wire: 'responses', skillRoot: '.agents/skills', keys: {} },
  {
    name: 'Copilot CLI',
    backend: 'copilot_exec',
    wire: 'chat',
    skillRoot: '.github/skills',
    keys: { COPILOT_PROVIDER_API_KEY: 'fake-copilot-key' },
  },
];

for (const agent of AGENTS)
  describe(`activation track: the real ${agent.name} over a loopback server`, function () {
    this.timeout(600_000);
    let dir: string;
    let server: LoopbackServer;
    let optimizer: LoopbackServer;

    if (missing) it(`pending: the real ${agent.name} activation run (${missing})`);

    before(async function () {
      if (!bin) return this.skip();
      dir = mkdtempSync(join(tmpdir(), `skillopt-act-${agent.backend}-`));
      const start = {
        anthropic: startAnthropicServer,
        responses: startResponsesServer,
        chat: startOpenAiServer,
      }[agent.wire];
      server = await start(
        agentModel({ wire: agent.wire, skillName: 'capitals', rule: 'RULE-7', trigger: matches }),
      );
      const cfg = join(dir, 'cfg');
      mkdirSync(cfg);
      const countries = ['France', 'Japan', 'Italy', 'Peru', 'Kenya', 'Norway'];
      writeFileSync(
        join(cfg, 'tasks.jsonl'),
        countries
          .map((c, i) =>
            JSON.stringify({
              id: `cap-${i}`,
              question: `What is the capital of ${c}?`,
              answer: ['PARIS', 'TOKYO', 'ROME', 'LIMA', 'NAIROBI', 'OSLO'][i],
            }),
          )
          .join('\n') + '\n',
      );
      optimizer = await startOpenAiServer(scriptedModels(loadTasks(join(cfg, 'tasks.jsonl'))));
    });

    after(async () => {
      await server?.close();
      await optimizer?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('raises the held-out trigger rate of a description that did not trigger, and reports it', async () => {
      const cfg = join(dir, 'cfg');
      // The skill is a folder (issue 17: packages are the trained unit): every trigger run gets all of it.
      mkdirSync(join(cfg, 'capitals', 'references'), { recursive: true });
      writeFileSync(
        join(cfg, 'capitals', 'SKILL.md'),
        '---\nname: capitals\ndescription: Formats answers in the house style.\n---\n\n# Capitals\n\nRULE-7: write the city name in UPPERCASE. More in references/cities.md.\n',
      );
      writeFileSync(
        join(cfg, 'capitals', 'references', 'cities.md'),
        '# Cities\n\nLIMA is the capital of Peru.\n',
      );
      writeFileSync(
        join(cfg, 'triggers.json'),
        JSON.stringify([
          ...SHOULD.map((query) => ({ query, should_trigger: true })),
          ...SHOULD_NOT.map((query) => ({ query, should_trigger: false })),
        ]),
      );
      writeFileSync(
        join(cfg, 'skillopt.yaml'),
        [
          'model:',
          '  optimizer_backend: openai',
          `  optimizer: ${scriptedOptimizerModel}`,
          `  optimizer_base_url: ${optimizer.url}`,
          `  target_backend: ${agent.backend}`,
          '  target: loopback-target-model',
          `  target_base_url: ${server.url}`,
          `  target_workspace_root: ${join(dir, 'agents')}`,
          '  target_delivery: pointer',
          '  target_keep_workspaces: true',
          '  codex_exec_sandbox: read-only',
          'train:',
          '  num_epochs: 1',
          '  batch_size: 2',
          'optimizer:',
          '  use_meta_skill: false',
          'evaluation:',
          '  eval_test: false',
          'env:',
          '  skill_init: capitals',
          '  data_path: tasks.jsonl',
          '  split_ratio: "2:2:2"',
          '  scorer: exact',
          '  exec_timeout: 90',
          'limits:',
          '  max_retries: 0',
          'cache:',
          '  enabled: false',
          'activation:',
          '  enabled: true',
          '  trigger_file: triggers.json',
          '  repeats: 1',
          '',
        ].join('\n'),
      );
      const home = join(dir, 'home');
      mkdirSync(home);
      const out = join(dir, 'run');
      const prepared = prepareRun({
        configPath: join(cfg, 'skillopt.yaml'),
        outDir: out,
        models: {
          trustedWorkspace: true,
          env: {
            PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
            HOME: home,
            OPENAI_API_KEY: 'fake-optimizer-loopback-key',
            ...agent.keys,
          },
        },
      });
      assert.equal(prepared.activation?.mode, 'agent');
      assert.ok(
        prepared.warnings.some((w) => /trigger queries run with native delivery/.test(w)),
        'target_delivery: pointer is said to apply to rollouts only',
      );
      const events: EngineEvent[] = [];
      await trainPrepared(prepared, {
        emit: (e) => events.push(e),
        signal: new AbortController().signal,
        resumeCommand: 'resume',
      });
      const [record] = events.flatMap((e) =>
        e.type === 'activation/verdict' ? [e.record] : [],
      ) as ActivationRecord[];
      assert.ok(record, 'the activation track ran at the epoch end');
      assert.equal(record.mode, 'agent');
      assert.equal(record.simulated, undefined, 'no simulated model took part');
      assert.equal(
        record.train_before.recall,
        0,
        'the initial description never loaded the skill for a should-trigger query',
      );
      assert.equal(record.action, 'accept_new_best', JSON.stringify(record, null, 1));
      assert.ok(record.held_out_candidate!.rate! > record.held_out_before.rate!);
      assert.equal(record.held_out_candidate!.recall, 1);
      assert.equal(record.held_out_candidate!.false_trigger_rate, 0);
      assert.equal(record.held_out_before.errored + record.held_out_candidate!.errored, 0);
      // The CLI was really asked: its requests carried the listing with the candidate description.
      assert.ok(server.requests.some((r) => JSON.stringify(r.body).includes(record.description_after)));
      // Each trigger run (a kept workspace whose task is a trigger query) had the whole folder installed.
      const triggerRuns = readdirSync(join(dir, 'agents'), { recursive: true, encoding: 'utf8' })
        .filter((p) => p.endsWith(`work${sep}task.md`))
        .map((p) => join(dir, 'agents', p))
        .filter((p) => [...SHOULD, ...SHOULD_NOT].includes(readFileSync(p, 'utf8').trim()));
      assert.ok(triggerRuns.length >= SHOULD.length + SHOULD_NOT.length, String(triggerRuns.length));
      for (const task of triggerRuns) {
        const installed = readdirSync(join(dirname(task), agent.skillRoot, 'capitals'), { recursive: true });
        assert.deepEqual(
          installed.sort(),
          ['SKILL.md', 'references', join('references', 'cities.md')].sort(),
        );
      }
      assert.equal(
        readFileSync(join(out, 'best_skill', 'references', 'cities.md'), 'utf8'),
        readFileSync(join(cfg, 'capitals', 'references', 'cities.md'), 'utf8'),
      );
      const best = readFileSync(join(out, 'best_skill.md'), 'utf8');
      assert.equal(parseFrontMatter(best)?.description, record.description_after);
      assert.match(best, /RULE-7/, 'the body is still there');
      const report = readFileSync(join(out, 'report.md'), 'utf8');
      const before = record.held_out_before.rate!.toFixed(3);
      const after = record.held_out_candidate!.rate!.toFixed(3);
      assert.ok(report.includes(`Held-out trigger rate: **${before} → ${after}**`), report);
    });
  });
