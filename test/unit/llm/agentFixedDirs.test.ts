import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { enterFixedDirs, leaveFixedDirs } from '../../../src/engine/llm/agents/isolation';

/** Folders a CLI makes at a fixed place (Codex's /tmp/codex-daemon-<uid>); the real CLI is in test/unit/agents. */
describe('llm/agents: folders a CLI makes outside its task folder', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'skillopt-fixed-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('removes one it made once the last task using it ends; keeps one that was there, or is in use', () => {
    const made = join(root, 'made');
    const there = join(root, 'there');
    const busy = join(root, 'busy');
    mkdirSync(there);
    const paths = [made, there, busy];
    enterFixedDirs(paths);
    enterFixedDirs(paths);
    for (const p of [made, busy]) mkdirSync(p, { recursive: true });
    writeFileSync(join(busy, 'rpc.sock'), '');
    leaveFixedDirs(paths);
    assert.ok(existsSync(made), 'removed while another task still ran');
    leaveFixedDirs(paths);
    assert.deepEqual(
      paths.map((p) => existsSync(p)),
      [false, true, true],
    );
  });
});
