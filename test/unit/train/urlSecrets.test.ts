import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { redactSecrets } from '../../../src/engine/config/flat';
import { prepareRun } from '../../../src/engine/run';
import { scrubUrl } from '../../../src/engine/llm/secrets';
import { startOpenAiServer, status, type LoopbackServer } from '../../support/loopback/openaiServer';
import {
  scriptedModels,
  scriptedOptimizerModel,
  scriptedTargetModel,
} from '../../support/loopback/scriptedModels';
import { exampleConfig, readJson, runSim, tempDir } from './helpers';

const KEY = 'sk-URLQUERY-5e4d3c2b1a09';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

function overridesFor(url: string, extra: string[] = []): string[] {
  return [
    'cache.enabled=false',
    'train.num_epochs=1',
    'model.optimizer_backend=openai_compatible',
    'model.target_backend=openai',
    `model.optimizer=${scriptedOptimizerModel}`,
    `model.target=${scriptedTargetModel}`,
    `model.optimizer_base_url=${url}?api-key=${KEY}&api-version=2024`,
    `model.target_base_url=${url}?api-key=${KEY}&api-version=2024`,
    ...extra,
  ];
}

describe('secrets in URLs', function () {
  this.timeout(90_000);

  it('scrubs userinfo and credential-like query values, keeping the rest of the URL as written', () => {
    assert.equal(
      scrubUrl('https://user:pa55word@host.example/v1?api-key=sk-1&api-version=2024-01&SIG=x#frag'),
      'https://***@host.example/v1?api-key=***&api-version=2024-01&SIG=***#frag',
    );
    assert.equal(
      scrubUrl('http://h/v1?token=a&access_token=b&code=c&apiKey=d&q=e'),
      'http://h/v1?token=***&access_token=***&code=***&apiKey=***&q=e',
    );
    assert.equal(scrubUrl('http://127.0.0.1:8080/v1'), 'http://127.0.0.1:8080/v1');
    assert.equal(scrubUrl('not a url ?key=1'), 'not a url ?key=1');
    assert.deepEqual(redactSecrets({ optimizer_base_url: 'https://u:p@h/v1?key=abc', n: 3 }), {
      optimizer_base_url: 'https://***@h/v1?key=***',
      n: 3,
    });
  });

  describe('over the OpenAI loopback', () => {
    let server: LoopbackServer;
    let dir: ReturnType<typeof tempDir>;

    before(async () => {
      dir = tempDir('skillopt-urlsecrets-');
      const probe = prepareRun({
        configPath: exampleConfig,
        outDir: dir.path,
        dryRun: true,
        overrides: ['cache.enabled=false'],
      });
      const all = [...probe.splits.train, ...probe.splits.val, ...probe.splits.test.unsealForEvaluation()];
      server = await startOpenAiServer(scriptedModels(all));
    });
    after(async () => {
      await server.close();
      dir.cleanup();
    });

    it('sends the key in the query string to the server, and writes it to no file in the run folder', async () => {
      const outDir = join(dir.path, 'run');
      const prepared = prepareRun({ configPath: exampleConfig, outDir, overrides: overridesFor(server.url) });
      const { outcome, events } = await runSim(prepared);
      assert.equal(outcome.status, 'finished');
      assert.ok(server.requests.length > 5);
      for (const r of server.requests) {
        assert.equal(r.path, '/v1/chat/completions');
        assert.equal(r.query['api-key'], KEY);
        assert.equal(r.query['api-version'], '2024');
      }
      const files = filesUnder(outDir);
      assert.ok(files.some((f) => f.endsWith('config.json')));
      for (const f of files) assert.ok(!readFileSync(f, 'utf8').includes(KEY), `${f} contains the key`);
      assert.ok(!JSON.stringify(events).includes(KEY), 'an event contains the key');
      const config = readJson<Record<string, unknown>>(outDir, 'config.json');
      assert.equal(config.optimizer_base_url, `${server.url}?api-key=***&api-version=2024`);
      const summary = readJson<{ config: Record<string, unknown> }>(outDir, 'summary.json');
      assert.equal(summary.config.target_base_url, `${server.url}?api-key=***&api-version=2024`);
    });

    it('keeps the key out of the error message of a failing call', async () => {
      const failing = await startOpenAiServer(() => status(500, 'broken'));
      try {
        const outDir = join(dir.path, 'failing');
        const prepared = prepareRun({
          configPath: exampleConfig,
          outDir,
          overrides: overridesFor(failing.url, ['limits.max_retries=0']),
        });
        let message = '';
        try {
          const { outcome } = await runSim(prepared);
          message = JSON.stringify(outcome);
        } catch (err) {
          message = (err as Error).message;
        }
        assert.ok(failing.requests.length > 0);
        assert.equal(failing.requests[0].query['api-key'], KEY);
        assert.match(message, /500/);
        assert.ok(!message.includes(KEY), message);
        for (const f of filesUnder(outDir))
          assert.ok(!readFileSync(f, 'utf8').includes(KEY), `${f} contains the key`);
      } finally {
        await failing.close();
      }
    });
  });
});
