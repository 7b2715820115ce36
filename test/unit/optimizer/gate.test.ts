import assert from 'node:assert/strict';
import { SkillOptError } from '../../../src/engine/errors';
import {
  decideGate,
  projectScore,
  semanticDensity,
  type GateMetric,
} from '../../../src/engine/optimizer/gate';
import { becomesBest } from '../../../src/protocol/vocabulary';

const S = '<!-- SLOW_UPDATE_START -->';
const E = '<!-- SLOW_UPDATE_END -->';

describe('gate', () => {
  describe('decideGate', () => {
    it('accepts a new best when strictly above current and best', () => {
      assert.equal(decideGate({ candidate: 0.6, current: 0.5, best: 0.5, useGate: true }), 'accept_new_best');
    });

    it('accepts without a new best when above current only', () => {
      assert.equal(decideGate({ candidate: 0.6, current: 0.4, best: 0.7, useGate: true }), 'accept');
    });

    it('accepts without a new best when it only ties the best', () => {
      assert.equal(decideGate({ candidate: 0.7, current: 0.4, best: 0.7, useGate: true }), 'accept');
    });

    it('rejects an exact tie with current', () => {
      assert.equal(decideGate({ candidate: 0.55, current: 0.55, best: 0.55, useGate: true }), 'reject');
    });

    it('rejects a lower candidate', () => {
      assert.equal(decideGate({ candidate: 0.4, current: 0.5, best: 0.5, useGate: true }), 'reject');
    });

    it('compares floats exactly: 0.1 + 0.2 beats 0.3, equal sums tie', () => {
      assert.equal(
        decideGate({ candidate: 0.1 + 0.2, current: 0.3, best: 0.3, useGate: true }),
        'accept_new_best',
      );
      assert.equal(
        decideGate({ candidate: 0.3, current: 0.1 + 0.2, best: 0.1 + 0.2, useGate: true }),
        'reject',
      );
      const mixed = projectScore({ hard: 0.5, soft: 0.7 }, { metric: 'mixed' });
      assert.equal(decideGate({ candidate: mixed, current: 0.6, best: 0.6, useGate: true }), 'reject');
    });

    it('rejects NaN scores', () => {
      assert.equal(decideGate({ candidate: NaN, current: 0.1, best: 0.1, useGate: true }), 'reject');
    });

    it('force-accepts everything when the gate is off', () => {
      assert.equal(decideGate({ candidate: 0.1, current: 0.5, best: 0.9, useGate: false }), 'force_accept');
      assert.equal(decideGate({ candidate: 0.95, current: 0.5, best: 0.9, useGate: false }), 'force_accept');
    });

    it('moves best only on a new best or a force-accept that beats it', () => {
      assert.equal(becomesBest('accept_new_best', 0.6, 0.5), true);
      assert.equal(becomesBest('accept', 0.6, 0.7), false);
      assert.equal(becomesBest('reject', 0.9, 0.5), false);
      assert.equal(becomesBest('force_accept', 0.95, 0.9), true);
      assert.equal(becomesBest('force_accept', 0.9, 0.9), false);
    });
  });

  describe('projectScore', () => {
    const score = { hard: 0.4, soft: 0.8 };

    it('projects hard, soft and mixed', () => {
      assert.equal(projectScore(score, { metric: 'hard' }), 0.4);
      assert.equal(projectScore(score, { metric: 'soft' }), 0.8);
      assert.equal(projectScore(score, { metric: 'mixed' }), 0.5 * 0.4 + 0.5 * 0.8);
      assert.equal(projectScore(score, { metric: 'mixed', mixedWeight: 0.25 }), 0.75 * 0.4 + 0.25 * 0.8);
    });

    it('clamps the mixed weight to [0, 1]', () => {
      assert.equal(projectScore(score, { metric: 'mixed', mixedWeight: 3 }), 0.8);
      assert.equal(projectScore(score, { metric: 'mixed', mixedWeight: -1 }), 0.4);
    });

    it('refuses an unknown metric', () => {
      assert.throws(
        () => projectScore(score, { metric: 'f1' as GateMetric }),
        (e: unknown) => SkillOptError.is(e, 'config') && e.place.key === 'evaluation.gate_metric',
      );
    });

    it('adds the density bonus only when enabled and a skill is given', () => {
      const skill = 'You MUST verify the answer.';
      assert.equal(
        projectScore(score, { metric: 'hard', skill, semanticDensity: { enabled: false, weight: 0.05 } }),
        0.4,
      );
      assert.equal(
        projectScore(score, { metric: 'hard', semanticDensity: { enabled: true, weight: 0.05 } }),
        0.4,
      );
      assert.equal(
        projectScore(score, { metric: 'hard', skill, semanticDensity: { enabled: true, weight: 0.05 } }),
        0.4 + 0.05 * (2 / 5),
      );
    });
  });

  describe('semanticDensity', () => {
    it('counts default leading words over lower-cased alphanumeric tokens', () => {
      assert.equal(semanticDensity('Always check. never guess; prefer-ENSURE x2'), 4 / 7);
      assert.equal(semanticDensity('mustard onlyness'), 0);
    });

    it('ignores protected blocks', () => {
      const skill = `Check units.\n${S}\nMUST MUST MUST\n${E}\nVerify twice.`;
      assert.equal(semanticDensity(skill), 1 / 4);
    });

    it('takes leading words as a list or a comma-separated string', () => {
      assert.equal(semanticDensity('check units and dates', ['Check', ' dates ']), 2 / 4);
      assert.equal(semanticDensity('check units and dates', 'units, and'), 2 / 4);
    });

    it('is 0 for a skill without tokens', () => {
      assert.equal(semanticDensity(''), 0);
      assert.equal(semanticDensity('— … !'), 0);
    });
  });
});
