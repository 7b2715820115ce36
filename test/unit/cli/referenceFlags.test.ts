import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CommandSpec } from '../../../src/cli/args';
import { parseCommon } from '../../../src/cli/commands/common';
import { evalSpec } from '../../../src/cli/commands/eval';
import { trainSpec } from '../../../src/cli/commands/train';
import { validateSpec } from '../../../src/cli/commands/validate';
import {
  canonicalCodexKey,
  DERIVED_FLAT_KEYS,
  LEGACY_TO_PATH,
  REFERENCE_JUDGE_FLAGS,
} from '../../../src/engine/config/flat';
import { dispositionOf } from '../../../src/engine/config/schema/disposition';

/**
 * The reference's command-line habits: every flag its train.py and eval_only.py define (read from
 * its source, checked in) is taken by our train/validate and eval, and lands on a key that is
 * honoured, mapped with a notice or refused, or on a flag of ours; none is dropped unsaid.
 */
const { scripts } = JSON.parse(
  readFileSync(join(__dirname, '../../fixtures/reference-configs/script-flags.json'), 'utf8'),
) as { scripts: Record<string, string[]> };

/** Flags the config loader answers with a notice of its own (overrides.ts applyLegacyArgs). */
const NOTICED = new Set(['max_analyst_rounds', 'steps_per_epoch', ...REFERENCE_JUDGE_FLAGS.keys()]);

function ours(spec: CommandSpec): Set<string> {
  return new Set([...spec.flags.map((f) => f.name), 'cfg-options']);
}

function check(script: string, specs: readonly CommandSpec[]): void {
  const flags = scripts[script];
  assert.ok(flags.length > 60, `${script}: ${flags.length} flags`);
  for (const spec of specs) {
    const mine = ours(spec);
    const refused: string[] = [];
    const undisposed: string[] = [];
    for (const flag of flags) {
      const name = flag.slice(2);
      if (mine.has(name)) continue;
      // Through the command's own parser: an unknown flag throws (exit 2), a legacy one is kept.
      let legacy: string[];
      try {
        legacy = parseCommon(['c.yaml', flag, 'v'], spec).legacyArgs;
      } catch (err) {
        refused.push(`${flag}: ${String(err)}`);
        continue;
      }
      assert.deepEqual(legacy, [flag, 'v'], `${spec.name} ${flag}`);
      const key = name.replace(/-/g, '_');
      if (NOTICED.has(key) || DERIVED_FLAT_KEYS.has(key)) continue;
      const path = LEGACY_TO_PATH.get(canonicalCodexKey(key))?.join('.') ?? `env.${canonicalCodexKey(key)}`;
      if (!dispositionOf(path)) undisposed.push(`${flag} → ${path}`);
    }
    assert.deepEqual(refused, [], `${spec.name} refuses flags of the reference's ${script}`);
    assert.deepEqual(undisposed, [], `flags of ${script} with no disposition`);
  }
}

describe("cli: every flag of the reference's scripts is taken and disposed", () => {
  it('scripts/train.py → skillopt train and validate', () =>
    check('scripts/train.py', [trainSpec, validateSpec]));
  it('scripts/eval_only.py → skillopt eval', () => check('scripts/eval_only.py', [evalSpec]));
});
