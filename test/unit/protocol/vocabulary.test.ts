import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  becomesBest,
  isAccepted,
  isInconclusive,
  isRejected,
  isSkipped,
  OTHER_VERDICTS,
  GATE_ACTIONS,
  REVIEW_MODES,
  SKIP_ACTIONS,
  VERSION,
  verdictKind,
  type VerdictAction,
} from '../../../src/protocol/vocabulary';

const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
  version: string;
  contributes: { configuration: { properties: Record<string, { enum?: string[] }> } };
};

describe('vocabulary', () => {
  it('carries the version of package.json (esbuild define; test/support/version.ts under mocha)', () => {
    assert.equal(VERSION, pkg.version);
  });

  it('offers exactly its review modes in the skillopt.reviewMode setting', () => {
    const setting = pkg.contributes.configuration.properties['skillopt.reviewMode'];
    assert.deepEqual(setting?.enum, ['fromConfig', ...REVIEW_MODES]);
  });

  it('gives every verdict exactly one kind', () => {
    const kinds: Record<VerdictAction, ReturnType<typeof verdictKind>> = {
      accept_new_best: 'accepted',
      accept: 'accepted',
      force_accept: 'accepted',
      reject: 'rejected',
      inconclusive: 'inconclusive',
      skip_no_patches: 'skipped',
      skip_no_rewrite: 'skipped',
      promote: 'accepted',
      keep: 'skipped',
      no_content: 'skipped',
      inject_placeholder: 'accepted',
      human_accept: 'accepted',
      human_reject: 'rejected',
      human_revert: 'rejected',
    };
    const all: VerdictAction[] = [...GATE_ACTIONS, ...SKIP_ACTIONS, ...OTHER_VERDICTS];
    assert.deepEqual(all.slice().sort(), Object.keys(kinds).sort());
    for (const a of all) {
      assert.equal(verdictKind(a), kinds[a], a);
      const flags = [isAccepted(a), isSkipped(a), isRejected(a), isInconclusive(a)].filter(Boolean).length;
      assert.equal(flags, 1, a);
    }
  });

  it('makes a new best only of a gated new best or a force-accept that beats the best', () => {
    assert.equal(becomesBest('accept_new_best', 0.5, 0.6), true);
    assert.equal(becomesBest('accept', 0.7, 0.6), false);
    assert.equal(becomesBest('force_accept', 0.7, 0.6), true);
    assert.equal(becomesBest('force_accept', 0.6, 0.6), false);
    assert.equal(becomesBest('reject', 0.9, 0.6), false);
  });
});
