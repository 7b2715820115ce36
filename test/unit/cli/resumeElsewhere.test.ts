import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shellQuote } from '../../../src/cli/commands/common';
import { RUN_FILE } from '../../../src/engine/store/layout';
import { cliEntry, cliProcess } from '../../support/cliProcess';

const root = join(__dirname, '..', '..', '..');

/**
 * A reference user's layout: the config in configs/, its paths written for the repo root, the
 * command run from the repo root with relative words. The printed resume line, pasted in another
 * folder, goes on with the same run.
 */
describe('the printed resume command works pasted from another folder', function () {
  this.timeout(90_000);
  let repo: string;
  beforeEach(() => {
    repo = mkdtempSync(join(tmpdir(), 'skillopt-resume-elsewhere-'));
    cpSync(join(root, 'examples', 'house-style'), join(repo, 'ex'), { recursive: true });
    mkdirSync(join(repo, 'configs'));
    const yaml = readFileSync(join(repo, 'ex', 'skillopt.yaml'), 'utf8')
      .replace('skill_init: SKILL.md', 'skill_init: ex/SKILL.md')
      .replace('data_path: tasks.jsonl', 'data_path: ex/tasks.jsonl');
    writeFileSync(join(repo, 'configs', 'hs.yaml'), yaml);
  });
  afterEach(() => rmSync(repo, { recursive: true, force: true }));

  it('after a stop on a cap, from a folder other than the one it ran in', () => {
    const first = cliProcess(
      [
        'train',
        '--config',
        'configs/hs.yaml',
        '--out',
        'runs/r',
        '--num_epochs',
        '1',
        '--cfg-options',
        'cache.enabled=false',
        'limits.max_tokens=20000',
      ],
      { cwd: repo },
    );
    const printed = first.stdout + first.stderr;
    assert.equal(first.code, 3, printed);
    const line = /Resume with:\n {2}(.*)\n/.exec(printed)?.[1] ?? '';
    // The program is started as the shell found it (tests run the TypeScript entry through tsx).
    const program = /^(?:cd \S+ && )?(.*?) train /.exec(line)?.[1] ?? '';
    assert.ok(program, line);
    const pasted = line
      .replace(program, [process.execPath, ...cliEntry].map(shellQuote).join(' '))
      .replace(/MORE_THAN_\d+/, '60000');
    const history = join(repo, 'runs', 'r', RUN_FILE.history);
    const steps = (JSON.parse(readFileSync(history, 'utf8')) as unknown[]).length;
    const again = spawnSync('sh', ['-c', pasted], {
      cwd: tmpdir(),
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    });
    assert.ok(again.status === 0 || again.status === 3, `${line}\n${again.stdout}${again.stderr}`);
    assert.ok((JSON.parse(readFileSync(history, 'utf8')) as unknown[]).length > steps);
  });
});
