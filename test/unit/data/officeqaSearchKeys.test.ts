import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { officeQaTurns } from '../../../src/engine/data/officeqa/env';

const fixtures = join(__dirname, '..', '..', 'fixtures');
const docs = join(fixtures, 'benchmarks', 'officeqa-docs', 'docs');
/** The reference's own OfficeQA config: the web-search values it spells out for offline runs. */
const referenceEnv = (
  parseYaml(
    readFileSync(join(fixtures, 'reference-configs', 'configs', 'officeqa', 'default.yaml'), 'utf8'),
  ) as {
    env: Record<string, unknown>;
  }
).env;

/**
 * OfficeQA's web-search keys are read only by its custom search mode, which a run refuses; offline
 * (the only mode run here, as in the reference's config) reads none of them. Changed from the
 * reference config's values, they get a notice instead of being dropped unsaid.
 */
describe('OfficeQA: web-search keys in offline mode', () => {
  const chatTarget = { backend: 'openai', acceptsTools: true };
  const agentTarget = { backend: 'command', acceptsTools: false };
  const searchNotices = (env: Record<string, unknown>, target = chatTarget): string[] =>
    officeQaTurns({ ...env, data_dirs: [docs] }, target).notices.filter((n) => n.startsWith('env.'));

  it("the reference config's values say nothing", () => {
    assert.deepEqual(searchNotices(referenceEnv), []);
    assert.deepEqual(searchNotices({}), []);
  });

  it('a changed one is named, with the mode that reads it, for chat and agent targets', () => {
    for (const target of [chatTarget, agentTarget]) {
      assert.deepEqual(
        searchNotices({ ...referenceEnv, search_provider: 'bing', search_max_num_results: 9 }, target),
        [
          "env.search_provider, env.search_max_num_results: read only by OfficeQA's web search (env.search_mode: custom, which this tool does not run), so they have no effect on this run: search_mode is offline",
        ],
      );
    }
  });
});
