import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { capAdvice, raisingCap } from '../../../src/cli/capResume';
import type { CommonArgs } from '../../../src/cli/commands/common';
import { PrettyPrinter } from '../../../src/cli/render';
import type { EngineEvent, StopCap } from '../../../src/protocol/events';
import { RUN_FILE } from '../../../src/engine/store/layout';

const root = join(__dirname, '..', '..', '..');
const entry = [
  '--import',
  'tsx',
  '--import',
  pathToFileURL(join(root, 'test', 'support', 'version.ts')).href,
  join(root, 'src', 'cli', 'main.ts'),
];

const args = (overrides: string[], legacyArgs: string[] = []): CommonArgs => ({
  config: 'c.yaml',
  overrides,
  legacyArgs,
  json: false,
  values: {},
});

const tokens: StopCap = { key: 'limits.max_tokens', limit: 20000, used: 26126 };

/** A stop on a spend cap: caps count the whole run, so the resume line raises the cap instead of repeating it. */
describe('CLI: resuming after a stop on a cap', () => {
  it('drops what set the cap (override or legacy flag) and adds the placeholder, keeping the rest', () => {
    const a = args(
      ['cache.enabled=false', 'limits.max_tokens=20000'],
      ['--batch_size', '4', '--max_tokens', '9'],
    );
    const { args: kept, added } = raisingCap(a, tokens);
    assert.deepEqual(kept.overrides, ['cache.enabled=false']);
    assert.deepEqual(kept.legacyArgs, ['--batch_size', '4']);
    assert.deepEqual(added, ['limits.max_tokens=MORE_THAN_26126']);
    const dollars = raisingCap(args([], ['--max_dollars=5']), {
      key: 'limits.max_dollars',
      limit: 5,
      used: 5.1234,
    });
    assert.deepEqual(dollars.args.legacyArgs, []);
    assert.deepEqual(dollars.added, ['limits.max_dollars=MORE_THAN_5.12']);
  });

  it('says which cap to raise, above what, in the stop message', () => {
    let out = '';
    const stream = {
      isTTY: false,
      write: (s: string) => ((out += s), true),
    } as unknown as NodeJS.WriteStream;
    const event: EngineEvent = {
      type: 'run/stopped',
      outDir: '/r',
      reason: 'token budget of 20000 reached (26126 used)',
      resumeCommand:
        'npx skillopt train c.yaml --out /r --resume --cfg-options limits.max_tokens=MORE_THAN_26126',
      cap: tokens,
    };
    new PrettyPrinter(stream).handle(event);
    assert.match(
      out,
      /counts the whole run, so resuming stops again at once unless limits\.max_tokens is raised above 26126/,
    );
    assert.ok(out.includes(capAdvice(tokens)));
    assert.match(out, /Resume with:\n {2}npx skillopt .*limits\.max_tokens=MORE_THAN_26126\n/);
  });

  it('prints a resume line that names the cap to raise, and with a raised cap the run goes on', function () {
    this.timeout(120_000);
    const dir = mkdtempSync(join(tmpdir(), 'skillopt-cap-'));
    try {
      cpSync(join(root, 'examples', 'house-style'), dir, { recursive: true });
      const out = join(dir, 'run');
      const cli = (words: string[]) =>
        spawnSync(process.execPath, [...entry, ...words], {
          cwd: root,
          encoding: 'utf8',
          env: { ...process.env, NO_COLOR: '1' },
        });
      const base = ['train', join(dir, 'skillopt.yaml'), '--out', out];
      const first = cli([...base, '--cfg-options', 'cache.enabled=false', 'limits.max_tokens=20000']);
      assert.equal(first.status, 3, first.stdout + first.stderr);
      const line = /Resume with:\n {2}(.*)\n/.exec(first.stdout)?.[1] ?? '';
      assert.match(line, /--resume --cfg-options cache\.enabled=false limits\.max_tokens=MORE_THAN_\d+$/);
      assert.doesNotMatch(line, /max_tokens=20000/);
      assert.match(first.stdout, /unless limits\.max_tokens is raised above \d+/);
      // --json: the event names the cap.
      const json = cli([
        ...base,
        '--resume',
        '--json',
        '--cfg-options',
        'cache.enabled=false',
        'limits.max_tokens=20000',
      ]);
      assert.equal(json.status, 3, json.stderr);
      const stopped = json.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as EngineEvent)
        .find((e) => e.type === 'run/stopped');
      assert.ok(stopped?.type === 'run/stopped' && stopped.cap?.key === 'limits.max_tokens', json.stdout);
      assert.match(stopped.resumeCommand, /limits\.max_tokens=MORE_THAN_\d+$/);
      // The line as printed, with the placeholder filled in, goes on past where it stopped.
      const steps = (JSON.parse(readFileSync(join(out, RUN_FILE.history), 'utf8')) as unknown[]).length;
      const words = line
        .split(' ')
        .slice(3)
        .map((w) => w.replace(/MORE_THAN_\d+/, '60000'));
      const raised = cli(['train', ...words]);
      assert.ok(raised.status === 0 || raised.status === 3, raised.stdout + raised.stderr);
      assert.ok((JSON.parse(readFileSync(join(out, RUN_FILE.history), 'utf8')) as unknown[]).length > steps);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
