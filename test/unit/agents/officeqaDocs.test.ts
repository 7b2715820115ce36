import assert from 'node:assert/strict';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { officeQaTurns } from '../../../src/engine/data/officeqa/env';
import type { TaskItem } from '../../../src/engine/data/tasks';
import { SkillOptError } from '../../../src/engine/errors';
import { MAX_FOLDER_BYTES, MAX_FOLDER_FILE_BYTES } from '../../../src/engine/llm/agents/docFolders';
import { CommandBackend, type AgentName } from '../../../src/engine/llm/command';
import { targetRequest, type ItemOptions } from '../../../src/engine/train/rolloutItem';
import type { TargetTurns } from '../../../src/engine/train/turns/types';
import { agentCliBin } from '../../support/agentClis';
import { promptText, startWireServer, type AgentWire } from '../../support/loopback/agentModel';
import { anthropicMessages } from '../../support/loopback/anthropicServer';
import type { LoopbackServer, RecordedRequest, Reply, ToolCall } from '../../support/loopback/core';
import { openAiMessages } from '../../support/loopback/openaiServer';
import { responsesInput } from '../../support/loopback/responsesServer';

/**
 * OfficeQA for agent targets, with the real Claude Code, Codex and Copilot CLIs against loopback
 * servers: the item's documents are in the agent's workspace under docs/ (a read-only copy), the
 * agent's own file tool reads one, and a file outside the workspace stays out of reach.
 */
const { bin } = agentCliBin();
const fixture = join(__dirname, '..', '..', 'fixtures', 'benchmarks', 'officeqa-docs', 'docs');
const DOC = 'treasury_bulletin_1944_01.txt';
const OUTSIDE = 'OUTSIDE-SECRET-MARKER-41';

const AGENTS: Array<{ agent: AgentName; wire: AgentWire; keys: Record<string, string> }> = [
  { agent: 'claude', wire: 'anthropic', keys: { ANTHROPIC_API_KEY: 'fake-anthropic-target-key' } },
  { agent: 'codex', wire: 'responses', keys: { OPENAI_API_KEY: 'fake-codex-target-key' } },
  { agent: 'copilot', wire: 'chat', keys: { COPILOT_PROVIDER_API_KEY: 'fake-copilot-target-key' } },
];

function toolResults(wire: AgentWire, req: RecordedRequest): string[] {
  switch (wire) {
    case 'anthropic':
      return anthropicMessages(req)
        .filter((m) => Array.isArray(m.content))
        .flatMap((m) => m.content as Array<{ type?: string; content?: unknown }>)
        .filter((b) => b?.type === 'tool_result')
        .map((b) => JSON.stringify(b.content));
    case 'responses':
      return responsesInput(req)
        .filter((i) => i.type === 'function_call_output')
        .map((i) => JSON.stringify(i.output));
    case 'chat':
      return openAiMessages(req)
        .filter((m) => m.role === 'tool')
        .map((m) => JSON.stringify(m.content));
  }
}

/** A read of `path` with the CLI's own file tool (Codex runs a command in its working folder). */
function readCall(wire: AgentWire, path: string): ToolCall {
  switch (wire) {
    case 'anthropic':
      return { name: 'Read', input: { file_path: path } };
    case 'chat':
      return { name: 'view', input: { path } };
    case 'responses':
      return { name: 'exec_command', input: { cmd: `cat '${path}'` } };
  }
}

/**
 * A scripted model: it reads the first candidate file named in the task (docs/root_1/…, under the
 * workspace the CLI names), then tries the file outside, then answers with the deficit it read.
 */
function docsModel(wire: AgentWire, outside: string): (req: RecordedRequest) => Reply {
  return (req) => {
    const text = promptText(wire, req);
    const results = toolResults(wire, req);
    const work = /(\/[^\s'"`<>]*\/task-[^\s'"`<>/]+\/work)/.exec(text)?.[1];
    const candidate = /^- (docs\/root_1\/\S+)$/m.exec(text)?.[1];
    if (results.length === 0 && work && candidate) {
      return { kind: 'reply', toolCalls: [readCall(wire, `${work}/${candidate}`)] };
    }
    if (results.length === 1) return { kind: 'reply', toolCalls: [readCall(wire, outside)] };
    const deficit = /1943\s+[\d,]+\s+[\d,]+\s+([\d,]+)/.exec(results.join('\n').replace(/\\n/g, '\n'))?.[1];
    return { kind: 'reply', text: `<answer>${deficit ?? 'unknown'}</answer>` };
  };
}

/** The rollout request an agent target gets for the OfficeQA item under `turns`. */
function agentRequest(
  item: TaskItem,
  turns: TargetTurns | undefined,
): ReturnType<typeof targetRequest>['req'] {
  const opts = {
    client: { backend: 'command' },
    turns,
    stage: 'rollout',
    skill: '',
    answerTag: 'answer',
  } as unknown as ItemOptions;
  return targetRequest(item, 'system', opts).req;
}

describe('OfficeQA documents in an agent target workspace', () => {
  let base: string;
  let data: string;
  before(() => {
    base = mkdtempSync(join(tmpdir(), 'skillopt-officeqa-agent-'));
    data = join(base, 'data');
    cpSync(fixture, data, { recursive: true });
    mkdirSync(join(base, 'outside'));
    writeFileSync(join(base, 'outside', 'secret.txt'), `${OUTSIDE}\n`);
  });
  after(() => rmSync(base, { recursive: true, force: true }));

  const item: TaskItem = {
    id: 'UID0002',
    input: 'What was the net deficit of the United States in fiscal year 1943, in millions of dollars?',
    answers: ['55,897'],
    fields: {
      source_files: DOC,
      source_docs: 'https://fraser.stlouisfed.org/title/treasury-bulletin-407/january-1944-6565?page=18',
    },
  };
  const agentTarget = { backend: 'command', acceptsTools: false };

  it('gives the agent the documents under docs/, the oracle pages and workspace candidate paths, with no notice of a question alone', () => {
    const { turns, notices } = officeQaTurns({ data_dirs: [data] }, agentTarget);
    const root = realpathSync(join(data, 'transformed'));
    assert.deepEqual(
      turns?.agentFolders?.map((f) => [f.name, f.path]),
      [['docs/root_1', root]],
    );
    assert.equal(turns?.tools, undefined);
    assert.match(notices.join('\n'), /read-only in each item's workspace under docs\/ \(3 files/);
    assert.doesNotMatch(notices.join('\n'), /question alone/);
    const req = agentRequest(item, turns);
    assert.deepEqual(req.task?.folders, turns?.agentFolders);
    const prompt = req.task!.prompt;
    assert.match(prompt, /## Oracle pages\n/);
    assert.match(prompt, /## Document corpus\n.*under `docs\/`/);
    assert.match(prompt, new RegExp(`## Candidate files\\n- docs/root_1/${DOC}\\n`));
    assert.ok(!prompt.includes(root), 'the task names workspace paths, not the original folder');
    assert.match(prompt, /<answer>\.\.\.<\/answer>/);
  });

  it('refuses a document folder with a link out of it before anything runs, and keeps a link inside as a file', () => {
    const dir = join(base, 'linked');
    cpSync(fixture, dir, { recursive: true });
    symlinkSync(join(dir, 'transformed', DOC), join(dir, 'transformed', 'alias.txt'));
    const { turns } = officeQaTurns({ data_dirs: [dir] }, agentTarget);
    assert.equal(turns?.agentFolders?.length, 1);
    symlinkSync(join(base, 'outside', 'secret.txt'), join(dir, 'transformed', 'leak.txt'));
    assert.throws(
      () => officeQaTurns({ data_dirs: [dir] }, agentTarget),
      /leak\.txt, a link to .*secret\.txt outside it/,
    );
  });

  it('bounds the copy: a file over 32 MiB is left out (said in a notice), a folder over 1 GiB is refused', () => {
    const dir = join(base, 'big', 'transformed');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'small.txt'), 'text\n');
    // Sparse files: their size counts, no disk is used.
    writeFileSync(join(dir, 'huge.txt'), '');
    truncateSync(join(dir, 'huge.txt'), MAX_FOLDER_FILE_BYTES + 1);
    const { turns, notices } = officeQaTurns({ data_dirs: [join(base, 'big')] }, agentTarget);
    assert.equal(turns?.agentFolders?.length, 1);
    assert.match(notices.join('\n'), /1 document file\(s\) over 32 MiB are left out .*huge\.txt/);
    for (let i = 0; i < MAX_FOLDER_BYTES / MAX_FOLDER_FILE_BYTES; i++) {
      writeFileSync(join(dir, `part${i}.txt`), '');
      truncateSync(join(dir, `part${i}.txt`), MAX_FOLDER_FILE_BYTES);
    }
    assert.throws(
      () => officeQaTurns({ data_dirs: [join(base, 'big')] }, agentTarget),
      (e: unknown) =>
        e instanceof SkillOptError && e.place.key === 'env.data_dirs' && /more than 1024 MiB/.test(e.message),
    );
  });

  for (const { agent, wire, keys } of AGENTS) {
    describe(`real ${agent} CLI against a loopback ${wire} server`, function () {
      this.timeout(120_000);
      let server: LoopbackServer;
      before(async function () {
        if (!bin) {
          this.skip();
          return;
        }
        server = await startWireServer(wire, docsModel(wire, join(base, 'outside', 'secret.txt')));
      });
      after(async () => {
        await server?.close();
      });

      it("reads a document with its own tool from docs/ in the workspace; the copy is read-only; a file outside is reached only by Codex's commands", async () => {
        const { turns } = officeQaTurns({ data_dirs: [data] }, agentTarget);
        const req = agentRequest(item, turns);
        const backend = new CommandBackend({
          agent,
          trusted: true,
          settings: { model: 'loopback-model', baseUrl: server.url, sandbox: 'read-only' },
          workspaceRoot: join(base, `agents-${agent}`),
          parentEnv: {
            PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
            HOME: join(base, 'home'),
            ...keys,
          },
          userHome: join(base, 'home'),
          timeoutMs: 60_000,
          killGraceMs: 1_000,
          keepWorkspaces: true,
        });
        const reply = await backend.call(req, new AbortController().signal);
        const trace = reply.trace!;
        const work = trace.workspace as string;
        assert.match(reply.text, /<answer>55,897<\/answer>/, JSON.stringify(trace.toolCalls));
        const calls = (trace.toolCalls as Array<{ detail?: string }>).map((c) => c.detail ?? '');
        assert.ok(
          calls.some((d) => d.includes(`docs/root_1/${DOC}`)),
          JSON.stringify(calls),
        );
        // Only the documents, as read-only files; nothing in docs/ is a link.
        const copied = readdirSync(join(work, 'docs', 'root_1'), {
          recursive: true,
          encoding: 'utf8',
        }).sort();
        assert.deepEqual(copied, [
          'older',
          'older/treasury_bulletin_1942_07.txt',
          'treasury_bulletin_1944_01.txt',
          'treasury_bulletin_1950_02.txt',
        ]);
        const mode = statSync(join(work, 'docs', 'root_1', DOC)).mode & 0o777;
        assert.equal(mode, 0o444);
        assert.equal(
          readFileSync(join(work, 'docs', 'root_1', DOC), 'utf8'),
          readFileSync(join(data, 'transformed', DOC), 'utf8'),
        );
        const leaked = server.requests.some((r) => r.rawBody.includes(OUTSIDE));
        // Claude Code and Copilot refuse a path outside the working folder. Codex's --sandbox modes
        // confine writes only (commands read the whole disk, as the reference's Codex target does).
        assert.equal(
          leaked,
          agent === 'codex',
          `${agent}: the outside file ${leaked ? 'was' : 'was not'} read`,
        );
        rmSync(join(work, '..'), { recursive: true, force: true });
      });
    });
  }
});
