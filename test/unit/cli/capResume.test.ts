import assert from 'node:assert/strict';
import { capAdvice, raisingCap } from '../../../src/cli/capResume';
import type { CommonArgs } from '../../../src/cli/commands/common';
import { PrettyPrinter } from '../../../src/cli/render';
import type { EngineEvent, StopCap } from '../../../src/protocol/events';

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
});
