import assert from 'node:assert/strict';
import { UsageError } from '../../../src/cli/exit';
import { parseCommon } from '../../../src/cli/commands/common';
import { evalSpec } from '../../../src/cli/commands/eval';
import { trainSpec } from '../../../src/cli/commands/train';
import { validateSpec } from '../../../src/cli/commands/validate';

/**
 * `--cfg-options` as the reference's argparse takes it (`nargs="+"`): the `--cfg-options=k=v` spelling
 * is an override like `--cfg-options k=v`, and the flag with no override is a usage error, never
 * taken and then dropped.
 */
describe('cli: --cfg-options in every spelling argparse takes', () => {
  for (const spec of [trainSpec, validateSpec, evalSpec]) {
    it(`${spec.name}: --cfg-options=k=v is an override, followed by more k=v words`, () => {
      const a = parseCommon(
        ['c.yaml', '--cfg-options=train.num_epochs=9', 'train.batch_size=3', '--json'],
        spec,
      );
      assert.deepEqual(a.overrides, ['train.num_epochs=9', 'train.batch_size=3']);
      assert.equal(a.json, true);
    });

    it(`${spec.name}: --cfg-options with no override is refused, naming the flag`, () => {
      for (const argv of [
        ['c.yaml', '--cfg-options'],
        ['c.yaml', '--cfg-options', '--json'],
        ['c.yaml', '--cfg-options='],
      ])
        assert.throws(
          () => parseCommon(argv, spec),
          (e: unknown) =>
            e instanceof UsageError && /--cfg-options needs at least one key=value/.test(e.message),
          argv.join(' '),
        );
    });
  }
});
