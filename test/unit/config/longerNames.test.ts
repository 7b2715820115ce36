import * as assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { validateConfigObject } from '../../../src/engine/config/schema/validate';

// `model.base_url` (how other tools spell it) was only warned about and ignored: a run with an
// OpenAI-compatible server in mind went to api.openai.com. Keys that name a field per role, or a
// count, are refused with the fields they mean.
describe('config: a key that is the tail of our field names', () => {
  const fixesOf = (yaml: string): string[] => {
    const result = validateConfigObject(parseYaml(yaml));
    assert.ok(!result.ok, 'refused, not a warning');
    return result.problems.map((p) => p.fix ?? '');
  };

  it('names both per-role fields for a key set once (base_url, temperature, concurrency)', () => {
    assert.deepEqual(
      fixesOf('model:\n  base_url: http://127.0.0.1:8000/v1\n  temperature: 0\nlimits:\n  concurrency: 4\n'),
      [
        'did you mean model.optimizer_base_url and model.target_base_url?',
        'did you mean model.optimizer_temperature and model.target_temperature?',
        'did you mean limits.optimizer_concurrency and limits.target_concurrency?',
      ],
    );
  });

  it('names the count for its noun (train.epochs → train.num_epochs)', () => {
    assert.deepEqual(fixesOf('train:\n  epochs: 2\n'), ['did you mean train.num_epochs?']);
  });

  it('still only warns about a key that is no part of any field', () => {
    const result = validateConfigObject(parseYaml('train:\n  wandb_project: demo\n'));
    assert.ok(result.ok);
    assert.equal(result.warnings.length, 1);
  });
});
