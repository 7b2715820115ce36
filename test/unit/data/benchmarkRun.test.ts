/**
 * Reference benchmark configs through prepareRun and eval: DocVQA items reach a vision target with
 * their page image over both SDK wires (checked by the loopback servers), text-only targets are
 * refused before anything is spent, LiveMathematicianBench gets its scorer and choice order.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { withShuffledChoices } from '../../../src/engine/data/choiceShuffle';
import { SkillOptError } from '../../../src/engine/errors';
import { evalPrepared } from '../../../src/engine/evalRun';
import { prepareRun, type PreparedRun } from '../../../src/engine/run';
import { anthropicImages, startAnthropicServer } from '../../support/loopback/anthropicServer';
import type { RecordedRequest, ReceivedImage } from '../../support/loopback/core';
import { openAiImages, startOpenAiServer, type LoopbackServer } from '../../support/loopback/openaiServer';
import { tempDir } from '../train/helpers';

const KEY = 'fake-key-benchmark-images-0001';
const fixtures = join(__dirname, '..', '..', 'fixtures', 'benchmarks');

/** Distinct bytes per page, so the server can tell which image came with which question. */
const page = (n: number): Buffer =>
  Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, n)]);

describe('reference benchmarks through a run', function () {
  this.timeout(30_000);
  let dir: ReturnType<typeof tempDir>;
  let server: LoopbackServer | undefined;
  beforeEach(() => {
    dir = tempDir('skillopt-benchrun-');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    dir.cleanup();
  });
  const write = (rel: string, text: string | Buffer): string => {
    const path = join(dir.path, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    return path;
  };

  /** A DocVQA split folder as the reference materialises it: one CSV per split, images beside the config. */
  function docVqa(): string {
    const header = 'questionId,question,answer,image_path,topic\n';
    let n = 0;
    for (const split of ['train', 'val', 'test']) {
      const rows = [1, 2].map(() => {
        n++;
        write(`data/docvqa_images/q${n}.png`, page(n));
        return `${n},What is on page ${n}?,"['p${n}', 'page ${n}']",data/docvqa_images/q${n}.png,form\n`;
      });
      write(`data/docvqa/splits/${split}/${split}.csv`, header + rows.join(''));
    }
    write('SKILL.md', '# Skill\nRead the page.\n');
    return write(
      'configs/docvqa.yaml',
      [
        'env:',
        '  name: docvqa',
        '  skill_init: ../SKILL.md',
        '  split_mode: split_dir',
        '  split_dir: data/docvqa/splits',
        '  image_detail: high',
        'model:',
        '  optimizer_backend: sim',
        '  optimizer: sim-optimizer',
        'cache:',
        '  enabled: false',
        '',
      ].join('\n'),
    );
  }

  const prepare = (config: string, overrides: string[], env: NodeJS.ProcessEnv = {}): PreparedRun =>
    prepareRun({
      configPath: config,
      cwd: dir.path,
      outDir: join(dir.path, 'run'),
      overrides,
      models: { env, trustedWorkspace: true },
    });

  async function evalTest(prepared: PreparedRun) {
    return evalPrepared(prepared, {
      skill: '# Skill\n',
      skillPath: join(dir.path, 'SKILL.md'),
      split: 'test',
      emit: () => undefined,
      signal: new AbortController().signal,
    });
  }

  /** The page number the question asks about, and the image the server decoded. */
  function checkImages(
    requests: RecordedRequest[],
    images: (r: RecordedRequest) => ReceivedImage[],
  ): number[] {
    return requests.map((r) => {
      const n = Number(/page (\d+)\?/.exec(JSON.stringify(r.body))?.[1]);
      const got = images(r);
      assert.equal(got.length, 1, 'one image per question');
      assert.equal(got[0].mediaType, 'image/png');
      assert.ok(got[0].bytes.equals(page(n)), `the bytes of page ${n}'s image arrive with its question`);
      return n;
    });
  }

  it('sends each DocVQA page image over Chat Completions (image_url parts) and scores by ANLS', async () => {
    server = await startOpenAiServer((req) => {
      const n = /page (\d+)\?/.exec(JSON.stringify(req.body))?.[1];
      return { kind: 'reply', text: `Looking at it.\n<answer>P${n}</answer>` };
    });
    const config = docVqa();
    const prepared = prepare(config, [
      'model.target_backend=openai',
      'model.target=gpt-4o',
      `model.target_base_url=${server.url}`,
    ]);
    assert.equal(prepared.scorer.name, 'anls', 'DocVQA is scored by ANLS unless env.scorer says otherwise');
    assert.ok(
      prepared.warnings.some((w) => /6 task\(s\) send their image/.test(w)),
      prepared.warnings.join('\n'),
    );
    const summary = await evalTest(prepared);
    assert.equal(summary.n_items, 2);
    assert.equal(summary.hard, 1, 'the list answer ["p5", "page 5"] accepts "P5"');
    const pages = checkImages(server.requests, openAiImages);
    assert.deepEqual(pages.sort(), [5, 6]);
    for (const r of server.requests)
      assert.equal(openAiImages(r)[0].detail, 'high', 'env.image_detail is sent');
    const conversation = readFileSync(
      join(dir.path, 'run', 'eval_test', 'predictions', '5', 'conversation.json'),
      'utf8',
    );
    assert.match(conversation, /\[image\] q5\.png/);
    assert.ok(!conversation.includes(page(5).toString('base64')), 'transcripts carry no image bytes');
  });

  it('sends each DocVQA page image over the Anthropic Messages API (image blocks)', async () => {
    server = await startAnthropicServer((req) => {
      const n = /page (\d+)\?/.exec(JSON.stringify(req.body))?.[1];
      return { kind: 'reply', text: `<answer>page ${n}</answer>` };
    });
    const config = docVqa();
    const prepared = prepare(
      config,
      [
        'model.target_backend=anthropic',
        'model.target=claude-haiku-4-5',
        `model.target_base_url=${server.url}`,
      ],
      { ANTHROPIC_API_KEY: KEY },
    );
    assert.ok(prepared.warnings.some((w) => /image_detail high applies to OpenAI targets only/.test(w)));
    const summary = await evalTest(prepared);
    assert.equal(summary.hard, 1);
    assert.deepEqual(checkImages(server.requests, anthropicImages).sort(), [5, 6]);
  });

  it('refuses image tasks for a text-only target before anything is spent', () => {
    const config = docVqa();
    for (const backend of ['sim', 'command']) {
      assert.throws(
        () => prepare(config, [`model.target_backend=${backend}`, 'model.target_command=echo hi']),
        (err: unknown) =>
          SkillOptError.is(err, 'config') &&
          err.place.key === 'model.target_backend' &&
          /6 task\(s\) show an image .* takes text only/.test(err.message),
        backend,
      );
    }
  });

  it('refuses an env.image_detail the APIs do not know', () => {
    assert.throws(
      () => prepare(docVqa(), ['model.target_backend=openai', 'env.image_detail=ultra']),
      (err: unknown) => SkillOptError.is(err, 'config') && err.place.key === 'env.image_detail',
    );
  });

  it('says env.image_detail has no effect when no task shows an image (never dropped unsaid)', () => {
    write('SKILL.md', '# Skill\n');
    write(
      'tasks.json',
      JSON.stringify([1, 2, 3, 4, 5].map((n) => ({ id: `t${n}`, question: `q${n}`, answer: 'a' }))),
    );
    const config = write(
      'plain.yaml',
      'env:\n  skill_init: SKILL.md\n  data_path: tasks.json\n  split_ratio: "2:1:2"\nmodel:\n  optimizer_backend: sim\n  target_backend: sim\ncache:\n  enabled: false\n',
    );
    const said = (detail: string) =>
      prepare(config, [`env.image_detail=${detail}`]).warnings.filter((w) => /env\.image_detail/.test(w));
    assert.deepEqual(said('high'), [
      'env.image_detail high: no task shows an image (image_path, image_paths, images or image), so it has no effect on this run',
    ]);
    // auto is the reference's default (DocVQA's config spells it out): nothing to say.
    assert.deepEqual(said('auto'), []);
  });

  it('refuses a benchmark that needs a simulator, naming the agent targets', () => {
    write('SKILL.md', '# Skill\n');
    const config = write(
      'alf.yaml',
      'env:\n  name: alfworld\n  skill_init: SKILL.md\n  split_dir: data/alfworld_path_split\n',
    );
    assert.throws(() => prepare(config, []), /benchmark "alfworld" needs the ALFWorld text-game simulator/);
  });

  /** A LiveMathematicianBench split folder lm/ of `items` cut at `a` and `b`, trained with train.seed 7. */
  const liveMathConfig = (items: unknown[], [a, b]: [number, number]): string => {
    write('lm/train/items.json', JSON.stringify(items.slice(0, a)));
    write('lm/val/items.json', JSON.stringify(items.slice(a, b)));
    write('lm/test/items.json', JSON.stringify(items.slice(b)));
    write('SKILL.md', '# Skill\n');
    return write(
      'lm.yaml',
      'env:\n  name: livemathematicianbench\n  skill_init: SKILL.md\n  split_mode: split_dir\n  split_dir: lm\nmodel:\n  optimizer_backend: sim\n  target_backend: sim\ncache:\n  enabled: false\ntrain:\n  seed: 7\n',
    );
  };

  it('LiveMathematicianBench split items: choice scorer, evaluation choices drawn with train.seed', () => {
    const { normalized } = JSON.parse(readFileSync(join(fixtures, 'livemath.json'), 'utf8')) as {
      normalized: { id: string }[];
    };
    const config = liveMathConfig(normalized, [2, 3]);
    const prepared = prepare(config, []);
    assert.equal(prepared.scorer.name, 'choice');
    const [val] = prepared.splits.val;
    assert.equal(val.shuffleChoices, true);
    const { shuffles } = JSON.parse(readFileSync(join(fixtures, 'livemath.json'), 'utf8')) as {
      shuffles: {
        id: string;
        seed: number;
        choices: { label: string; text: string }[];
        correct_choice: { label: string };
      }[];
    };
    const want = shuffles.find((s) => s.id === val.id && s.seed === 7)!;
    assert.deepEqual(
      val.choices,
      want.choices.map((c) => c.text),
      'as the reference draws it for seed 7',
    );
    assert.deepEqual(val.answers, [want.correct_choice.label]);
    assert.deepEqual(
      prepared.splits.train[0].choiceLabels,
      ['A', 'B', 'C', 'D'],
      'train items keep theirs until batched',
    );
    assert.deepEqual(
      withShuffledChoices(prepared.splits.train[0], 7).choices,
      shuffles.find((s) => s.id === prepared.splits.train[0].id && s.seed === 7)!.choices.map((c) => c.text),
    );
    const off = prepare(config, ['env.shuffle_choices=false']);
    assert.equal(off.splits.val[0].shuffleChoices, undefined);
  });

  it("LiveMathematicianBench split items keep their own id, which seeds the choice shuffle (as the reference's)", () => {
    const { items, shuffles } = JSON.parse(
      readFileSync(join(fixtures, 'livemath-split-ids.json'), 'utf8'),
    ) as {
      items: { id: string | number }[];
      shuffles: {
        id: string;
        choices: { label: string; text: string }[];
        correct_choice: { label: string };
      }[];
    };
    const config = liveMathConfig(items, [1, 2]);
    const prepared = prepare(config, []);
    assert.deepEqual(
      prepared.splits.val.map((t) => t.id),
      ['17'],
    );
    assert.deepEqual([...prepared.splits.test.ids], ['lmb-custom-8']);
    for (const task of [...prepared.splits.val, withShuffledChoices(prepared.splits.train[0], 7)]) {
      const want = shuffles.find((s) => s.id === task.id)!;
      assert.deepEqual(
        task.choices,
        want.choices.map((c) => c.text),
        `${task.id}, drawn as the reference draws it`,
      );
      assert.deepEqual(task.answers, [want.correct_choice.label], task.id);
    }
  });
});
