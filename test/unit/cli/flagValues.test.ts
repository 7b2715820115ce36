import assert from 'node:assert/strict';
import { UsageError } from '../../../src/cli/exit';
import { parseCommon } from '../../../src/cli/commands/common';
import { evalSpec } from '../../../src/cli/commands/eval';
import { trainSpec } from '../../../src/cli/commands/train';

// node's parseArgs complaint was passed on whole: three lines ("…is ambiguous. / Did you forget… /
// To specify…'--aa=-XYZ'.") and then ". Fix: see skillopt eval --help".
describe('cli: a flag value node cannot take is one line naming the flag and the fix', () => {
  it('a value that starts with a dash (--aa -3)', () => {
    assert.throws(
      () => parseCommon(['c.yaml', '--skill', 'S.md', '--aa', '-3'], evalSpec),
      (e: unknown) =>
        e instanceof UsageError &&
        !e.message.includes('\n') &&
        /^--aa has no value/.test(e.message) &&
        /--aa=-3|--aa=VALUE/.test(e.fix ?? ''),
    );
  });

  it('a flag with no value at the end (--out)', () => {
    assert.throws(
      () => parseCommon(['c.yaml', '--out'], trainSpec),
      (e: unknown) =>
        e instanceof UsageError && !e.message.includes('\n') && /^--out has no value/.test(e.message),
    );
  });
});
