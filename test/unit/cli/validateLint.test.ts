import assert from 'node:assert/strict';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliInProcess as cli } from '../../support/cliInProcess';
import { tempDir } from '../train/helpers';

const example = join(__dirname, '..', '..', '..', 'examples', 'house-style');

/** `skillopt validate` on a copy of the example whose SKILL.md is `skill`, with flags and `key=value` overrides. */
async function validate(
  skill: string,
  ...options: string[]
): Promise<{ code: number; out: string; err: string }> {
  const d = tempDir('skillopt-validate-lint-');
  try {
    const folder = join(d.path, 'house-style');
    cpSync(example, folder, { recursive: true });
    writeFileSync(join(folder, 'SKILL.md'), skill);
    const flags = options.filter((o) => o.startsWith('--'));
    const keys = options.filter((o) => !o.startsWith('--'));
    const r = await cli([
      'validate',
      join(folder, 'skillopt.yaml'),
      ...flags,
      ...(keys.length ? ['--cfg-options', ...keys] : []),
    ]);
    return { code: r.code, out: r.stdout, err: r.stderr };
  } finally {
    d.cleanup();
  }
}

const body = '# House style\n\nAnswer in house style.\n';
const front = (fields: string): string => `---\n${fields}---\n${body}`;
// An agent target whose program exists: validate checks it is installed but runs nothing.
const codex = ['model.target_backend=codex_exec', `model.codex_exec_path=${process.execPath}`];
const copilot = ['model.target_backend=copilot_exec', `model.copilot_exec_path=${process.execPath}`];

describe('skillopt validate: SKILL.md lint', () => {
  it('passes the bundled example without a lint notice', async () => {
    const r = await validate(front('name: house-style\ndescription: Answer in house style.\n'));
    assert.equal(r.code, 0, r.err);
    assert.doesNotMatch(r.out, /warning: .*SKILL\.md:/);
  });

  it('prints findings that do not stop the target as one-line warnings with file:line:column and the fix', async () => {
    const r = await validate(
      front('name: house-style-answers\ndescription: Answer in house style.\n') +
        'See [rules](references/rules.md).\n',
    );
    assert.equal(r.code, 0, r.err);
    const lines = r.out.split('\n').filter((l) => /warning: .*SKILL\.md:/.test(l));
    assert.equal(lines.length, 2, r.out);
    assert.match(
      lines[0] ?? '',
      /SKILL\.md:2:7: name "house-style-answers" is not the name of its folder "house-style".*Fix: set `name: house-style`/,
    );
    assert.match(
      lines[1] ?? '',
      /SKILL\.md:8:5: references\/rules\.md does not exist beside SKILL\.md.*Fix: create it, or remove the link/,
    );
  });

  it('trains a bare Markdown skill on a chat target without a word about front matter', async () => {
    const r = await validate(body);
    assert.equal(r.code, 0, r.err);
    assert.doesNotMatch(r.out, /front matter/);
  });

  it('says what an agent target gets instead of a missing front matter', async () => {
    const r = await validate(body, ...codex);
    assert.equal(r.code, 0, r.err);
    assert.match(
      r.out,
      /SKILL\.md:1:1: no front matter: this run gives Codex `name: skill` and a generic description/,
    );
  });

  it('refuses, before anything runs, what keeps the target agent from loading the skill (exit 1, one message)', async () => {
    const r = await validate(front('name: house-style\n'), ...codex);
    assert.equal(r.code, 1);
    assert.equal(r.out, '');
    assert.match(
      r.err,
      /SKILL\.md:1: Codex, the run's target, would not load this skill: line 1: front matter has no `description`/,
    );
    assert.match(r.err, /Fix: add `description:`/);
    assert.equal(r.err.trim().split('\n').length, 1, r.err);
    // The same skill only draws a warning for a chat target, which reads it as its system prompt.
    const chat = await validate(front('name: house-style\n'));
    assert.equal(chat.code, 0, chat.err);
    assert.match(chat.out, /warning: .*SKILL\.md:1:1: front matter has no `description`/);
  });

  it('refuses a name Copilot would not find in the folder the run installs the skill in', async () => {
    const skill = front('name: house-style\ndescription: Answer in house style.\n');
    assert.equal((await validate(skill, ...copilot)).code, 0);
    const r = await validate(skill, ...copilot, 'model.target_skill_name=style');
    assert.equal(r.code, 1);
    assert.match(
      r.err,
      /model\.target_skill_name installs it as style\/ but its name is "house-style".*Fix: set model\.target_skill_name to house-style/,
    );
  });

  it('refuses broken YAML for an agent target, and puts the finding in --json as an error object', async () => {
    const r = await validate(front('name: house-style\ndescription: "open\n'), ...codex, '--json');
    assert.equal(r.code, 1);
    const parsed = JSON.parse(r.out.trim()) as { error: { reason: string; message: string } };
    assert.equal(parsed.error.reason, 'skill');
    assert.match(parsed.error.message, /not valid YAML/);
  });
});
