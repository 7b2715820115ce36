import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SkillOptError } from '../../../src/engine/errors';
import { Accounting } from '../../../src/engine/llm/accounting';
import { RunLedger } from '../../../src/engine/llm/ledger';
import { readJsonl } from '../../../src/engine/store/jsonl';
import { EVAL_FILE, RunLayout } from '../../../src/engine/store/layout';
import { RESULT_ROWS } from '../../../src/engine/store/runRows';
import { stepArtifacts } from '../../../src/engine/store/runReader';
import { tempDir } from '../train/helpers';

/** A paid row of calls an agent CLI priced itself (its figure is the spend). */
const paid = (reported: unknown): string =>
  JSON.stringify({
    session: 's1',
    t: 1_700_000_000_000,
    step: 1,
    phase: 'step',
    kind: 'usage',
    stage: 'rollout',
    role: 'target',
    provider: 'claude_code_exec:cli_priced',
    model: 'claude-agent',
    calls: 1,
    prompt_tokens: 100,
    completion_tokens: 10,
    reported_dollars: reported,
    dollars: reported,
  }) + '\n';

const ioError = (line: number, fix: RegExp) => (err: unknown) =>
  SkillOptError.is(err, 'io') &&
  err.place.line === line &&
  new RegExp(`ledger\\.jsonl:${line}:`).test(err.message) &&
  fix.test(err.message);

describe('ledger.jsonl is read through its schema: spend is never guessed', () => {
  let dir: ReturnType<typeof tempDir>;
  let file: string;
  beforeEach(() => {
    dir = tempDir('skillopt-ledger-rows-');
    file = join(dir.path, 'ledger.jsonl');
  });
  afterEach(() => dir.cleanup());

  it('sums the spend of earlier processes (a well-formed ledger)', () => {
    writeFileSync(file, paid(0.25) + paid(0.5));
    const accounting = new Accounting();
    new RunLedger(file).attach(accounting)();
    assert.equal(accounting.totals().dollars, 0.75);
  });

  it('refuses a row whose price is text, naming the file, the line and the fix, before anything is paid', () => {
    const text = paid(0.25) + paid('0.50');
    writeFileSync(file, text);
    // Before: the text was added as text, and $0.75 of spend became "000.250.50".
    assert.throws(() => new RunLedger(file), ioError(2, /reported_dollars/));
    assert.throws(() => new RunLedger(file), /Fix: restore the line/);
    assert.equal(readFileSync(file, 'utf8'), text, 'the ledger was changed');
  });

  it('refuses a line cut short instead of dropping what it paid', () => {
    const text = paid(0.25) + paid(0.5).slice(0, 60);
    writeFileSync(file, text);
    assert.throws(() => new RunLedger(file), ioError(2, /not JSON/));
    assert.equal(readFileSync(file, 'utf8'), text, 'the ledger was changed');
  });
});

describe('results.jsonl is read through its schema', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir('skillopt-result-rows-');
  });
  afterEach(() => dir.cleanup());

  const row = (id: string, hard: unknown): string =>
    JSON.stringify({
      id,
      hard,
      soft: 0,
      task_description: 'q',
      predicted_answer: 'a',
      expected: ['b'],
      n_turns: 1,
      response: 'a',
    });

  it('drops a torn last line after a kill; only the writer (repair) removes it from the file', () => {
    const file = join(dir.path, 'results.jsonl');
    const whole = `${row('a', 1)}\n${row('b', 0)}\n`;
    writeFileSync(file, `${whole}{"id":"c","ha`);
    assert.deepEqual(
      readJsonl(file, RESULT_ROWS).map((r) => r.id),
      ['a', 'b'],
    );
    assert.equal(readFileSync(file, 'utf8'), `${whole}{"id":"c","ha`, 'a reader rewrote the file');
    readJsonl(file, RESULT_ROWS, { repair: true });
    assert.equal(readFileSync(file, 'utf8'), whole, 'the kept lines are not byte for byte as written');
  });

  it('refuses a row of the wrong shape in the tree reader, naming the file and line', () => {
    const rollout = new RunLayout(dir.path).rolloutDir(1);
    mkdirSync(rollout, { recursive: true });
    // Before: "0" was truthy, so the failed item was shown as passed (no failed trajectory).
    writeFileSync(join(rollout, EVAL_FILE.results), `${row('a', 1)}\n${row('b', '0')}\n`);
    assert.throws(
      () => stepArtifacts(dir.path, 1),
      (err: unknown) =>
        SkillOptError.is(err, 'io') &&
        /results\.jsonl:2: is not a result row .*\(hard: /.test(err.message) &&
        /Fix: .*--fresh/.test(err.message),
    );
  });

  it("reads the Python reference's rows, which lack fields ours always have", () => {
    const rollout = new RunLayout(dir.path).rolloutDir(1);
    mkdirSync(rollout, { recursive: true });
    const python = { id: 'trial_1', hard: 0, soft: 0.0, n_turns: 3, fail_reason: 'Timeout after 50 steps' };
    writeFileSync(join(rollout, EVAL_FILE.results), JSON.stringify(python) + '\n');
    const failed = stepArtifacts(dir.path, 1).failedTrajectories;
    assert.deepEqual(
      failed.map((f) => [f.id, f.reason]),
      [['trial_1', 'Timeout after 50 steps']],
    );
    assert.deepEqual(readJsonl(join(rollout, EVAL_FILE.results), RESULT_ROWS)[0]?.expected, []);
  });
});
