import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadTasks } from '../../../src/engine/data/tasks';
import { cacheKey } from '../../../src/engine/llm/cache';
import { CommandBackend } from '../../../src/engine/llm/command';
import type { ChatRequest } from '../../../src/engine/llm/types';

const fakeAgent = resolve(__dirname, '../../fixtures/fakecli/fakeAgent.cjs');
const evals = resolve(__dirname, '../../fixtures/evals/invoice-totals/evals/evals.json');

/** An agent target gets a task's input files (skill-creator `files`) in its workspace, under their own names. */
describe('agent targets: input files in the workspace', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'skillopt-inputfiles-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const [item] = loadTasks(evals);
  const file = item.files![0];
  const request = (files: NonNullable<ChatRequest['task']>['files']): ChatRequest => ({
    role: 'target',
    stage: 'rollout',
    messages: [{ role: 'user', content: item.input }],
    task: { taskId: item.id, skill: '# Invoices', skillName: 'invoice-totals', prompt: item.input, files },
  });

  it('copies each file under the name the eval gives it; a name leaving the workspace keeps its file name only', async () => {
    const b = new CommandBackend({
      command: [
        process.execPath,
        fakeAgent,
        'echo',
        '{task_file}',
        '{skill_file}',
        '{workspace}',
        '{prompt}',
      ],
      trusted: true,
      workspaceRoot: root,
      keepWorkspaces: true,
    });
    const reply = await b.call(
      request([
        { name: file.name, path: file.path, digest: file.digest },
        { name: '../../outside.csv', path: file.path, digest: file.digest },
      ]),
      new AbortController().signal,
    );
    const ws = reply.trace?.workspace as string;
    const original = readFileSync(file.path, 'utf8');
    assert.equal(readFileSync(join(ws, 'evals', 'files', 'invoice-a.csv'), 'utf8'), original);
    assert.equal(readFileSync(join(ws, 'outside.csv'), 'utf8'), original);
  });

  it("keys the response cache on the files' contents", () => {
    const b = new CommandBackend({
      command: [process.execPath, fakeAgent, 'echo'],
      trusted: true,
      workspaceRoot: root,
    });
    const one = cacheKey(b, request([{ name: file.name, path: file.path, digest: file.digest }]));
    const other = cacheKey(b, request([{ name: file.name, path: file.path, digest: 'changed' }]));
    assert.notEqual(one, other);
  });
});
