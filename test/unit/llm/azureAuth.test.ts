import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { AccessToken, TokenCredential } from '@azure/identity';
import { defaultConfig, type SkillOptConfig } from '../../../src/engine/config/schema';
import { SkillOptError } from '../../../src/engine/errors';
import { silentLogger } from '../../../src/engine/log';
import { buildModels } from '../../../src/engine/models';
import type { LoopbackServer, RecordedRequest } from '../../support/loopback/openaiServer';
import { reply, startOpenAiServer, status } from '../../support/loopback/openaiServer';

/** Azure keyless auth over the real OpenAI SDK's AzureOpenAI client and @azure/identity. */
describe('llm/azureAuth: Azure OpenAI sign-in modes', () => {
  let server: LoopbackServer | undefined;
  let dir: string;
  const savedPath = process.env.PATH;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skillopt-azure-'));
  });
  afterEach(async () => {
    process.env.PATH = savedPath;
    rmSync(dir, { recursive: true, force: true });
    await server?.close();
    server = undefined;
  });

  /** The loopback server answers only a request that carries exactly this credential. */
  const expecting = (header: 'authorization' | 'api-key', value: string) => (req: RecordedRequest) =>
    req.headers[header] === value && (header === 'api-key' || req.headers['api-key'] === undefined)
      ? reply('<answer>ok</answer>')
      : status(401, 'bad credential');

  const config = (model: Partial<SkillOptConfig['model']>): SkillOptConfig => {
    const cfg = defaultConfig();
    Object.assign(cfg.model, {
      optimizer_backend: 'sim',
      target_backend: 'openai_chat',
      target: 'gpt-4o',
      azure_openai_endpoint: server!.url.replace(/\/v1$/, ''),
      ...model,
    });
    cfg.limits.max_retries = 0;
    return cfg;
  };
  const ask = async (
    cfg: SkillOptConfig,
    extra: Parameters<typeof buildModels>[1] extends infer E ? Partial<E> : never = {},
  ) => {
    const setup = buildModels(cfg, { tasks: [], testItems: [], logger: silentLogger, env: {}, ...extra });
    const result = await setup.target.chat({
      role: 'target',
      stage: 'rollout',
      messages: [{ role: 'user', content: 'hi' }],
    });
    return { setup, result };
  };

  it('azure_cli: takes the token from `az account get-access-token` and sends it as a bearer token', async () => {
    const log = join(dir, 'az-args.txt');
    const az = join(dir, 'az');
    const expires = Math.floor(Date.now() / 1000) + 3600;
    writeFileSync(
      az,
      `#!/bin/sh\necho "$@" > "${log}"\ncat <<'JSON'\n${JSON.stringify({
        accessToken: 'cli-token-for-loopback',
        expiresOn: new Date(expires * 1000).toISOString().replace('T', ' ').slice(0, 19),
        expires_on: expires,
        subscription: 'sub',
        tenant: 'tenant',
        tokenType: 'Bearer',
      })}\nJSON\n`,
    );
    chmodSync(az, 0o755);
    process.env.PATH = `${dir}${delimiter}${savedPath ?? ''}`;
    server = await startOpenAiServer(expecting('authorization', 'Bearer cli-token-for-loopback'));
    const { result, setup } = await ask(config({ azure_openai_auth_mode: 'azure_cli' }));
    assert.equal(result.text, '<answer>ok</answer>');
    assert.match(
      readFileSync(log, 'utf8'),
      /get-access-token .*--resource https:\/\/cognitiveservices\.azure\.com/,
    );
    assert.match(server.requests[0].path, /^\/openai\/deployments\/gpt-4o\/chat\/completions/);
    assert.ok(
      setup.notices.some((n) => /Azure OpenAI .* with azure_cli auth/.test(n)),
      setup.notices.join('\n'),
    );
  });

  it('azure_cli is the default when no key is set; a failed sign-in says to run az login', async () => {
    const az = join(dir, 'az');
    writeFileSync(az, '#!/bin/sh\necho "ERROR: Please run \'az login\' to setup account." >&2\nexit 1\n');
    chmodSync(az, 0o755);
    process.env.PATH = `${dir}${delimiter}${savedPath ?? ''}`;
    server = await startOpenAiServer(expecting('authorization', 'Bearer never'));
    await assert.rejects(ask(config({})), (e: unknown) => {
      assert.ok(SkillOptError.is(e), String(e));
      assert.match(e.message, /Azure sign-in \(azure_cli\) gave no token/);
      assert.match(e.message, /run "az login"/);
      return true;
    });
    assert.equal(server.requests.length, 0);
  });

  it('managed_identity: a per-role mode and scope; the credential token reaches the server', async () => {
    const scopes: string[] = [];
    const credential: TokenCredential = {
      getToken: (scope): Promise<AccessToken> => {
        scopes.push(...(Array.isArray(scope) ? scope : [scope]));
        return Promise.resolve({
          token: 'mi-token-for-loopback',
          expiresOnTimestamp: Date.now() + 3_600_000,
        });
      },
    };
    server = await startOpenAiServer(expecting('authorization', 'Bearer mi-token-for-loopback'));
    const cfg = config({
      azure_openai_auth_mode: 'api_key',
      target_azure_openai_auth_mode: 'managed_identity',
      target_azure_openai_ad_scope: 'api://custom/.default',
    });
    const { result } = await ask(cfg, {
      azureCredential: credential,
      keys: { azure_openai: 'unused-stored-key' },
    });
    assert.equal(result.text, '<answer>ok</answer>');
    assert.deepEqual(scopes, ['api://custom/.default']);
  });

  it('managed_identity without an injected credential: @azure/identity asks the identity endpoint', async () => {
    const asked: Array<{ url: string; header: string | undefined }> = [];
    const identity = createServer((req, res) => {
      asked.push({ url: req.url ?? '', header: req.headers['x-identity-header'] as string | undefined });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          access_token: 'app-service-mi-token',
          expires_on: String(Math.floor(Date.now() / 1000) + 3600),
          resource: 'https://cognitiveservices.azure.com',
          token_type: 'Bearer',
        }),
      );
    });
    await new Promise<void>((done) => identity.listen(0, '127.0.0.1', done));
    const saved = { endpoint: process.env.IDENTITY_ENDPOINT, header: process.env.IDENTITY_HEADER };
    // The App Service form of a managed identity: an endpoint and a header in the environment.
    process.env.IDENTITY_ENDPOINT = `http://127.0.0.1:${(identity.address() as AddressInfo).port}/msi/token`;
    process.env.IDENTITY_HEADER = 'identity-header-for-loopback';
    try {
      server = await startOpenAiServer(expecting('authorization', 'Bearer app-service-mi-token'));
      const { result } = await ask(
        config({ azure_openai_auth_mode: 'aad', azure_openai_managed_identity_client_id: 'mi-client-1' }),
      );
      assert.equal(result.text, '<answer>ok</answer>');
      assert.equal(asked.length, 1);
      assert.match(asked[0].url, /resource=https%3A%2F%2Fcognitiveservices\.azure\.com/);
      assert.match(asked[0].url, /client_id=mi-client-1/);
      assert.equal(asked[0].header, 'identity-header-for-loopback');
    } finally {
      for (const [name, value] of [
        ['IDENTITY_ENDPOINT', saved.endpoint],
        ['IDENTITY_HEADER', saved.header],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await new Promise((done) => identity.close(done));
    }
  });

  it('api_key: the key goes in the api-key header; a blank mode with a key uses it and says so', async () => {
    server = await startOpenAiServer(expecting('api-key', 'azure-test-key-0001'));
    const { result, setup } = await ask(config({}), { env: { AZURE_OPENAI_API_KEY: 'azure-test-key-0001' } });
    assert.equal(result.text, '<answer>ok</answer>');
    assert.ok(setup.notices.some((n) => /auth_mode is blank and a key is set/.test(n)));
    const explicit = await ask(
      config({ target_azure_openai_auth_mode: 'key', target_azure_openai_api_key: 'azure-test-key-0001' }),
    );
    assert.equal(explicit.result.text, '<answer>ok</answer>');
  });

  it('openai_compatible mode: the plain OpenAI SDK against the endpoint, with the Azure key', async () => {
    server = await startOpenAiServer(expecting('authorization', 'Bearer azure-test-key-0002'));
    const cfg = config({
      azure_openai_endpoint: server.url,
      azure_openai_auth_mode: 'openai_compatible',
      azure_openai_api_key: 'azure-test-key-0002',
    });
    const { result } = await ask(cfg);
    assert.equal(result.text, '<answer>ok</answer>');
    assert.equal(server.requests[0].path, '/v1/chat/completions');
  });

  it('refuses openai_chat without an endpoint, and an unknown auth mode, before any call', () => {
    const build = (model: Partial<SkillOptConfig['model']>) => () =>
      buildModels(
        Object.assign(defaultConfig(), {
          model: { ...defaultConfig().model, optimizer_backend: 'sim', ...model },
        }),
        {
          tasks: [],
          testItems: [],
          logger: silentLogger,
          env: { OPENAI_API_KEY: 'openai-test-key-0003' },
        },
      );
    assert.throws(build({ target_backend: 'openai_chat' }), (e: unknown) => {
      assert.ok(SkillOptError.is(e, 'config'));
      assert.match(
        e.message,
        /model\.target_backend: model backend 'openai_chat' is Azure OpenAI, but no Azure endpoint is set/,
      );
      assert.match(e.message, /openai as the backend/);
      return true;
    });
    assert.throws(
      build({
        target_backend: 'openai_chat',
        azure_openai_endpoint: 'https://r.openai.azure.com',
        target_azure_openai_auth_mode: 'kerberos',
      }),
      (e: unknown) =>
        SkillOptError.is(e, 'config') &&
        /model\.target_azure_openai_auth_mode: unknown Azure OpenAI auth mode 'kerberos'.*azure_cli/.test(
          e.message,
        ),
    );
  });
});
