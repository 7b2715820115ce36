import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadedIn, triggerRequest } from '../../../src/engine/activation/evaluate';
import type { ActivationPlan } from '../../../src/engine/activation/plan';
import { readTriggerFile, splitTriggers, type TriggerQuery } from '../../../src/engine/activation/queries';
import { triggerScore, type TriggerRun } from '../../../src/engine/activation/rate';
import { activationRound } from '../../../src/engine/activation/track';
import { SkillOptError } from '../../../src/engine/errors';
import type { ChatRequest, ChatResult, ModelClient } from '../../../src/engine/llm/types';
import { silentLogger } from '../../../src/engine/log';
import { LOAD_SKILL_TOOL } from '../../../src/engine/prompts/activation';
import { keepDescription, withDescription } from '../../../src/engine/skill/description';
import { parseFrontMatter } from '../../../src/engine/skill/frontMatter';
import type { RunContext } from '../../../src/engine/train/context';
import { defaultTrainSettings } from '../../../src/engine/train/settings';

const q = (id: string, shouldTrigger: boolean, query = `query ${id}`): TriggerQuery => ({
  id,
  query,
  shouldTrigger,
});
const run = (id: string, shouldTrigger: boolean, loaded: boolean | undefined, repeat = 0): TriggerRun => ({
  id,
  repeat,
  shouldTrigger,
  ...(loaded === undefined ? { error: 'timed out', errorKind: 'timeout' } : { loaded }),
});

describe('activation: trigger rate', () => {
  it('scores a load right for should-trigger and a non-load right for should-not-trigger, per query then averaged', () => {
    const qs = [q('a', true), q('b', false)];
    const s = triggerScore(qs, [
      run('a', true, true),
      run('a', true, false, 1),
      run('b', false, false),
      run('b', false, false, 1),
    ]);
    assert.equal(s.queries[0].score, 0.5);
    assert.equal(s.queries[1].score, 1);
    assert.equal(s.rate, 0.75);
    assert.equal(s.recall, 0.5);
    assert.equal(s.falseTriggerRate, 0);
    assert.equal(s.runs, 4);
    assert.equal(s.errored, 0);
  });

  it('keeps errored runs out of the rate and counts them; a query with only errored runs is not scored', () => {
    const qs = [q('a', true), q('b', false)];
    const s = triggerScore(qs, [
      run('a', true, true),
      run('a', true, undefined, 1),
      run('b', false, undefined),
    ]);
    assert.equal(s.queries[0].score, 1, 'the errored run is not a miss');
    assert.equal(s.queries[1].score, undefined);
    assert.equal(s.rate, 1);
    assert.equal(s.errored, 2);
    assert.equal(s.runs, 1);
    assert.equal(triggerScore(qs, [run('a', true, undefined)]).rate, undefined);
  });
});

describe('activation: trigger queries', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'skillopt-trig-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("reads skill-creator's trigger-eval shape, and refuses an entry without should_trigger, naming its line", () => {
    const good = join(dir, 'ok.json');
    writeFileSync(
      good,
      JSON.stringify(
        [
          { query: 'a b', should_trigger: true },
          { query: 'c', should_trigger: false, id: 'x' },
        ],
        null,
        1,
      ),
    );
    assert.deepEqual(readTriggerFile(good), [
      { id: 'q1', query: 'a b', shouldTrigger: true },
      { id: 'x', query: 'c', shouldTrigger: false },
    ]);
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"query": "a", "should_trigger": true}\n{"query": "b", "should_trigger": "yes"}\n');
    assert.throws(
      () => readTriggerFile(bad),
      (e: unknown) => e instanceof SkillOptError && /should_trigger/.test(e.message) && e.place.line === 2,
    );
  });

  it('splits each kind 60/40 with a seed, both sides holding both kinds', () => {
    const qs = [
      ...Array.from({ length: 5 }, (_, i) => q(`t${i}`, true)),
      ...Array.from({ length: 5 }, (_, i) => q(`f${i}`, false)),
    ];
    const a = splitTriggers(qs, 0.6, 42);
    assert.deepEqual(splitTriggers(qs, 0.6, 42), a, 'same seed, same split');
    assert.equal(a.train.length, 6);
    assert.equal(a.heldOut.length, 4);
    for (const side of [a.train, a.heldOut]) {
      assert.ok(side.some((x) => x.shouldTrigger) && side.some((x) => !x.shouldTrigger));
    }
    assert.notDeepEqual(splitTriggers(qs, 0.6, 7).train, a.train);
  });
});

describe('activation: description in the front matter', () => {
  it('rewrites the description and leaves the other keys and the body', () => {
    const skill = '---\nname: capitals\ndescription: old\nlicense: MIT\n---\n\n# Body\n';
    const out = withDescription(skill, 'Use when: capital cities');
    assert.equal(parseFrontMatter(out)?.description, 'Use when: capital cities');
    assert.equal(parseFrontMatter(out)?.data.license, 'MIT');
    assert.ok(out.endsWith('---\n\n# Body\n'));
  });

  it('asks a chat target with the listing and the load function, and reads the call', () => {
    const skill = '---\nname: capitals\ndescription: capital cities\n---\nbody';
    const opts = {
      mode: 'chat' as const,
      repeats: 1,
      hostBudgetChars: 8,
      signal: new AbortController().signal,
    } as const;
    const req = triggerRequest(skill, q('a', true, 'capital of Peru?'), 0, {
      ...opts,
      target: {} as ModelClient,
    });
    assert.match(
      req.messages[0].content,
      /<name>capitals<\/name>\s*<description>capital <\/description>/,
      'cut at the budget',
    );
    assert.equal(req.tools?.[0].name, LOAD_SKILL_TOOL);
    const call = { trace: { toolCalls: [{ name: LOAD_SKILL_TOOL, arguments: { name: 'capitals' } }] } };
    assert.equal(loadedIn(call, 'chat', 'capitals'), true);
    assert.equal(
      loadedIn(
        { trace: { toolCalls: [{ name: LOAD_SKILL_TOOL, arguments: { name: 'other' } }] } },
        'chat',
        'capitals',
      ),
      false,
    );
    const agentReq = triggerRequest(skill, q('a', true, 'capital of Peru?'), 1, {
      ...opts,
      mode: 'agent',
      target: {} as ModelClient,
    });
    assert.equal(agentReq.task?.delivery, 'native');
    assert.equal(agentReq.task?.prompt, 'capital of Peru?');
    assert.equal(agentReq.repeat, 1);
    assert.equal(loadedIn({ trace: { skillLoaded: true } }, 'agent', 'capitals'), true);
  });
});

/**
 * The gate with a target that "loads" when the description contains a word of the query (errors
 * on queries marked so) and an optimizer that answers a fixed description: both are our own
 * ModelClient interface, not an SDK.
 */
function context(proposal: string, seen: ChatRequest[]): RunContext {
  const reply = (text: string, trace?: Record<string, unknown>): ChatResult => ({
    text,
    usage: { promptTokens: 1, completionTokens: 1 },
    backend: 'test',
    model: 'test',
    seconds: 0,
    attempts: 1,
    cached: false,
    ...(trace ? { trace } : {}),
  });
  const target: ModelClient = {
    role: 'target',
    backend: 'openai',
    model: 'test',
    chat: (req) => {
      seen.push(req);
      const user = req.messages.at(-1)!.content;
      if (user.includes('ERR'))
        return Promise.reject(new SkillOptError('llm', 'server said 500', {}, { kind: 'api' }));
      const desc = /<description>([^<]*)</.exec(req.messages[0].content)?.[1] ?? '';
      const hit = user.split(' ').some((w) => desc.split(' ').includes(w));
      return Promise.resolve(
        reply(
          '',
          hit ? { toolCalls: [{ name: LOAD_SKILL_TOOL, arguments: { name: 'capitals' } }] } : undefined,
        ),
      );
    },
  };
  const optimizer: ModelClient = {
    role: 'optimizer',
    backend: 'openai',
    model: 'test',
    chat: () => Promise.resolve(reply(JSON.stringify({ reasoning: 'r', description: proposal }))),
  };
  return {
    settings: { ...defaultTrainSettings, maxErroredShare: 0.5 },
    optimizer,
    target,
    scorer: {} as RunContext['scorer'],
    outDir: '',
    signal: new AbortController().signal,
    logger: silentLogger,
    emit: () => undefined,
    recordFallback: () => undefined,
  };
}

describe('activation: the description gate', () => {
  const skill = '---\nname: capitals\ndescription: answers questions\n---\n\nbody\n';
  const plan = (train: TriggerQuery[], heldOut: TriggerQuery[]): ActivationPlan => ({
    split: { train, heldOut },
    source: 'test',
    mode: 'chat',
    repeats: 2,
    maxDescriptionChars: 1024,
    hostBudgetChars: 15000,
  });
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'skillopt-actgate-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const train = [q('t1', true, 'capital Peru'), q('t2', false, 'poem autumn')];
  const held = [q('h1', true, 'capital Kenya'), q('h2', false, 'recipe soup')];

  it('keeps a candidate that is strictly better on the held-out queries, in the skill it returns', async () => {
    const r = await activationRound(context('capital cities', []), plan(train, held), {
      skill,
      epoch: 1,
      step: 4,
      dir,
    });
    assert.equal(r.record.action, 'accept_new_best');
    assert.equal(r.record.held_out_before.rate, 0.5);
    assert.equal(r.record.held_out_candidate?.rate, 1);
    assert.equal(parseFrontMatter(r.skill)?.description, 'capital cities');
    assert.equal(r.record.description_after, 'capital cities');
  });

  it('rejects a tie on the held-out queries (ties reject), keeping the skill', async () => {
    const r = await activationRound(
      context('capital Peru only', []),
      plan(train, [q('h2', false, 'recipe soup')]),
      { skill, epoch: 1, step: 4, dir },
    );
    assert.equal(r.record.action, 'reject');
    assert.equal(r.skill, skill);
    assert.equal(r.record.description_after, 'answers questions');
  });

  it('rejects a candidate worse on the train queries without paying for its held-out runs', async () => {
    const seen: ChatRequest[] = [];
    const r = await activationRound(context('poem autumn', seen), plan(train, held), {
      skill,
      epoch: 1,
      step: 4,
      dir,
    });
    assert.equal(r.record.action, 'reject');
    assert.equal(r.record.held_out_candidate, undefined);
    const candidateHeld = seen.filter(
      (s) => s.messages[0].content.includes('poem autumn') && /Kenya|soup/.test(s.messages[1].content),
    );
    assert.equal(candidateHeld.length, 0);
  });

  it('keeps errored runs out of the rates and counts them; stops when they dominate', async () => {
    const withErr = [...held, q('h3', true, 'capital ERR')];
    const r = await activationRound(context('capital cities', []), plan(train, withErr), {
      skill,
      epoch: 1,
      step: 4,
      dir,
    });
    assert.equal(r.record.held_out_before.errored, 2);
    assert.equal(r.record.held_out_before.rate, 0.5);
    const dir2 = mkdtempSync(join(tmpdir(), 'skillopt-actgate-'));
    try {
      await assert.rejects(
        activationRound(context('x', []), plan([q('e1', true, 'ERR a'), q('e2', true, 'ERR b')], held), {
          skill,
          epoch: 1,
          step: 4,
          dir: dir2,
        }),
        (e: unknown) => e instanceof SkillOptError && /could not run 4 of 4 trigger queries/.test(e.message),
      );
    } finally {
      rmSync(dir2, { recursive: true, force: true });
    }
  });
});

describe('activation: body steps leave the description to its track', () => {
  it('puts the current description back into a candidate whose edit changed it, and nothing else', () => {
    const current = '---\nname: capitals\ndescription: trained one\n---\n\nold body\n';
    const edited = '---\nname: capitals\ndescription: a body edit changed this\n---\n\nnew body\n';
    const kept = keepDescription(current, edited);
    assert.equal(parseFrontMatter(kept)?.description, 'trained one');
    assert.match(kept, /new body/);
    const untouched = '---\nname: capitals\ndescription: trained one\n---\n\nnew body\n';
    assert.equal(keepDescription(current, untouched), untouched);
  });
});
