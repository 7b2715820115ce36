import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cliInProcess as cli } from '../../support/cliInProcess';
import { startOpenAiServer, type LoopbackServer } from '../../support/loopback/openaiServer';
import { exampleConfig, tempDir } from '../train/helpers';

/**
 * `limits.max_dollars` with a model that has no price: the cap could never be reached, so the run
 * is refused before its first call (validate says the same), not warned about once money is spent.
 */
describe('a dollar cap with a model nobody prices', function () {
  this.timeout(60_000);
  let server: LoopbackServer;
  let out: ReturnType<typeof tempDir>;
  const saved = process.env.OPENAI_API_KEY;
  before(async () => {
    server = await startOpenAiServer(() => ({ kind: 'reply', text: '<answer>x</answer>' }));
    process.env.OPENAI_API_KEY = 'test-key-not-real';
  });
  after(async () => {
    await server.close();
    if (saved === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = saved;
  });
  beforeEach(() => (out = tempDir('skillopt-capprice-')));
  afterEach(() => out.cleanup());

  /** Both roles on the loopback server (provider openai_compatible: no built-in price). */
  const wire = (): string[] => [
    'cache.enabled=false',
    'model.optimizer_backend=openai',
    'model.target_backend=openai',
    'model.optimizer=house-optimizer',
    'model.target=house-target',
    `model.optimizer_base_url=${server.url}`,
    `model.target_base_url=${server.url}`,
  ];

  it('train refuses before any request, naming the key, the models and the way out', async () => {
    const r = await cli([
      'train',
      exampleConfig,
      '--out',
      out.path,
      '--cfg-options',
      ...wire(),
      'limits.max_dollars=2',
    ]);
    assert.equal(r.code, 1, r.stderr);
    const message = r.stderr.split('\n').find((l) => l.startsWith('skillopt: ')) ?? '';
    assert.match(message, /limits\.max_dollars/);
    assert.match(message, /no price is known for house-optimizer, house-target/);
    assert.match(message, /Fix: add prices\.house-optimizer\.input_per_mtok .*limits\.max_tokens/);
    assert.equal(server.requests.length, 0, 'a request was sent under a cap that cannot hold');
    assert.equal(existsSync(join(out.path, 'ledger.jsonl')), false);
    // Refused before the call estimate is printed.
    assert.equal(r.stdout, '');
  });

  it('train --fresh refuses before it deletes the run already in the folder', async () => {
    const first = await cli([
      'train',
      exampleConfig,
      '--out',
      out.path,
      '--cfg-options',
      'train.num_epochs=1',
    ]);
    assert.equal(first.code, 0, first.stderr);
    const r = await cli([
      'train',
      exampleConfig,
      '--out',
      out.path,
      '--fresh',
      '--cfg-options',
      ...wire(),
      'limits.max_dollars=2',
    ]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /limits\.max_dollars.*no price is known/);
    assert.ok(existsSync(join(out.path, 'runtime_state.json')), 'the refused --fresh deleted the run');
  });

  it('validate says the same', async () => {
    const r = await cli(['validate', exampleConfig, '--cfg-options', ...wire(), 'limits.max_dollars=2']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /limits\.max_dollars.*no price is known for house-optimizer, house-target/);
  });

  it('with one role priced, says before any call which calls the cap will not count', async () => {
    const half = [
      ...wire(),
      'limits.max_dollars=2',
      'prices.house-target.input_per_mtok=1',
      'prices.house-target.output_per_mtok=2',
    ];
    const r = await cli(['validate', exampleConfig, '--cfg-options', ...half]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      `${r.stdout}${r.stderr}`,
      /warning: limits\.max_dollars \(\$2\) counts only priced calls, and some will not be: no price is known for house-optimizer/,
    );
  });

  it('eval counts only the models it calls: the target, not the optimizer', async () => {
    const examples = join(exampleConfig, '..');
    const evalArgs = (...o: string[]): string[] => [
      'eval',
      exampleConfig,
      '--skill',
      join(examples, 'SKILL.md'),
      '--split',
      'selection',
      '--out',
      out.path,
      '--cfg-options',
      ...wire(),
      'limits.max_dollars=2',
      ...o,
    ];
    // An unpriced target: refused before any request.
    const refused = await cli(evalArgs());
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /limits\.max_dollars.*no price is known for house-target\b/);
    assert.equal(server.requests.length, 0);
    // A priced target: the unpriced optimizer, never called by eval, is no reason to warn.
    const ran = await cli(
      evalArgs('prices.house-target.input_per_mtok=1', 'prices.house-target.output_per_mtok=2'),
    );
    assert.equal(ran.code, 0, ran.stderr);
    assert.doesNotMatch(`${ran.stdout}${ran.stderr}`, /house-optimizer/);
    assert.ok(server.requests.length > 0);
  });

  it("eval --json keeps the cap's notice in its one summary object (it was dropped unsaid)", async () => {
    const r = await cli([
      'eval',
      exampleConfig,
      '--skill',
      join(exampleConfig, '..', 'SKILL.md'),
      '--split',
      'selection',
      '--out',
      out.path,
      '--json',
      '--cfg-options',
      ...wire(),
      'limits.max_dollars=2',
      'prices.house-target.input_per_mtok=1',
      'prices.house-target.output_per_mtok=2',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 1, r.stdout);
    const summary = JSON.parse(lines[0]) as { warnings?: string[] };
    assert.ok(
      summary.warnings?.some((w) => /house-target have no cached_input_per_mtok/.test(w)),
      lines[0],
    );
  });

  it('goes ahead once prices: names every model, or without a dollar cap', async () => {
    const priced = [
      ...wire(),
      'limits.max_dollars=2',
      'prices.house-optimizer.input_per_mtok=1',
      'prices.house-optimizer.output_per_mtok=2',
      'prices.house-target.input_per_mtok=1',
      'prices.house-target.output_per_mtok=2',
    ];
    // Without a cached-input rate, replies that read the provider's prompt cache have no price.
    const noCacheRate = await cli(['validate', exampleConfig, '--cfg-options', ...priced]);
    assert.equal(noCacheRate.code, 0);
    assert.match(
      noCacheRate.stdout,
      /the prices: of house-optimizer, house-target have no cached_input_per_mtok, so calls that read the provider's prompt cache are unpriced/,
    );
    const full = await cli([
      'validate',
      exampleConfig,
      '--cfg-options',
      ...priced,
      'prices.house-optimizer.cached_input_per_mtok=0.5',
      'prices.house-target.cached_input_per_mtok=0.5',
    ]);
    assert.equal(full.code, 0);
    assert.doesNotMatch(full.stdout, /max_dollars/);
    assert.equal((await cli(['validate', exampleConfig, '--cfg-options', ...wire()])).code, 0);
    // The simulated models cost nothing: a dollar cap on them is no contradiction.
    assert.equal((await cli(['validate', exampleConfig, '--cfg-options', 'limits.max_dollars=2'])).code, 0);
  });
});
