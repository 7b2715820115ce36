import assert from 'node:assert/strict';
import { applyEditsSpec } from '../../../src/cli/commands/applyEdits';
import { evalSpec } from '../../../src/cli/commands/eval';
import { trainSpec } from '../../../src/cli/commands/train';
import { validateSpec } from '../../../src/cli/commands/validate';
import { topLevelHelp } from '../../../src/cli/main';

// `skillopt --help` once listed `--split train|val|test|all` (eval takes seven splits) and left out
// flags such as `--batch`: its usage lines are checked against the commands' own flag lists.
describe('skillopt --help (top level)', () => {
  for (const spec of [validateSpec, trainSpec, evalSpec, applyEditsSpec]) {
    it(`names only flags that ${spec.name} takes, and its required ones`, () => {
      const line = topLevelHelp.split('\n').find((l) => l.startsWith(`  skillopt ${spec.name} `));
      assert.ok(line, `no usage line for ${spec.name}`);
      const known = new Set(spec.flags.map((f) => f.name));
      for (const [, name] of line.matchAll(/--([a-z][a-z-]*)/g)) {
        // `[legacy flags]` stands for the reference's flags, which only legacy commands take.
        assert.ok(known.has(name!), `${spec.name}'s line names --${name}, which ${spec.name} does not take`);
      }
      // A choice list (`--split a|b`) is the command's whole list, not part of it.
      for (const [, name, choices] of line.matchAll(/--([a-z-]+) ([a-z_]+(?:\|[a-z_]+)+)/g)) {
        const help = spec.flags.find((f) => f.name === name)!.help;
        const oneOf = /one of ([a-z_, ]+)/.exec(help)?.[1]?.trim().split(', ');
        const shown = choices!.split('|');
        for (const c of shown) assert.match(help, new RegExp(`\\b${c}\\b`), `--${name} ${c}`);
        if (oneOf) assert.deepEqual(shown, oneOf, `--${name} lists part of its choices`);
      }
      if (!spec.legacy) assert.doesNotMatch(line, /legacy flags/);
      for (const f of spec.flags.filter((f) => /\(required/.test(f.help)))
        assert.match(line, new RegExp(`(^|[^[])--${f.name}\\b`), `--${f.name} is required`);
    });
  }

  it('lists every flag the commands share in its Options', () => {
    for (const flag of ['--config', '--cfg-options', '--json', '--verbose', '--help'])
      assert.match(topLevelHelp, new RegExp(`^  ${flag}\\b`, 'm'), flag);
  });
});
