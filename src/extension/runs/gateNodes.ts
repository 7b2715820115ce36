/**
 * The run's gate beside its steps in the Runs tree: a Gate row (what the selection split can tell
 * from noise, and the latest A/A check of this run's skills) and, once the run has finished, a
 * Scores row (the target alone beside the initial, best and final skills, or that it was not
 * scored). Pure (no `vscode`); the words come from protocol/gateText.
 */
import { gateFactsOf } from '../../engine/store/gateFacts';
import {
  aaSummary,
  aaText,
  describeGatePower,
  describeNoSkill,
  NO_SKILL_OFF,
  noSkillVerdict,
  powerSummary,
} from '../../protocol/gateText';
import type { AaRecord } from '../../protocol/records';
import { TreeItemContext } from '../constants';
import { formatScore } from './format';
import type { RunView } from './liveState';
import type { NodeSpec } from './treeNodes';

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** The Gate and Scores rows of a run; `aa` is the newest A/A check kept in the run folder. */
export function gateNodes(run: RunView, aa?: AaRecord): NodeSpec[] {
  const facts = gateFactsOf(run.summary);
  const power = run.live?.gatePower ?? facts.gatePower;
  const rows: NodeSpec[] = [];
  if (power || aa) {
    const text = power ? describeGatePower(power) : undefined;
    rows.push({
      id: `gate:${run.dir}`,
      kind: 'artifact',
      runId: run.dir,
      label: power ? `Gate: ${power.test}` : 'Gate',
      description: [power ? powerSummary(power) : undefined, aa ? aaSummary(aa) : undefined]
        .filter(Boolean)
        .join(' · '),
      tooltip: [
        ...(text ? [`Power check: ${text}.`] : []),
        ...(aa
          ? aaText(aa)
          : ['No A/A check yet: SkillOpt: Check Gate Noise (A/A) scores a skill several times.']),
      ].join('\n'),
      icon: { id: 'law' },
      contextValue: TreeItemContext.message,
      collapsible: 'none',
    });
  }
  const s = run.summary;
  if (s && (facts.noSkill || facts.noSkillOff)) {
    const sel = {
      initial: num(s.baseline_selection_hard),
      best: num(s.best_selection_hard),
      final: num(s.final_selection_hard),
    };
    const test = {
      initial: num(s.baseline_test_hard),
      best: num(s.test_hard),
      final: num(s.final_test_hard),
    };
    const n = facts.noSkill;
    // The test split decides when the run has one; the selection split is what the gate saw.
    const onTest = test.best !== undefined && n?.test !== null;
    rows.push({
      id: `scores:${run.dir}`,
      kind: 'artifact',
      runId: run.dir,
      label: 'Scores',
      description: `${onTest ? 'test' : 'selection'}: ${[
        n ? `no skill ${formatScore(onTest ? (n.test ?? undefined) : n.selection)}` : 'no skill not scored',
        `initial ${formatScore(onTest ? test.initial : sel.initial)}`,
        `best ${formatScore(onTest ? test.best : sel.best)}`,
      ].join(' · ')}`,
      tooltip: [
        ...(n ? [`No skill (the target alone): ${describeNoSkill(n)}`] : []),
        ...(['initial', 'best', 'final'] as const).map(
          (k) =>
            `${k[0].toUpperCase()}${k.slice(1)}: selection ${formatScore(sel[k])}, test ${formatScore(test[k])}`,
        ),
        n ? noSkillVerdict(n, { selection: sel.best ?? null, test: test.best ?? null }) : NO_SKILL_OFF,
      ].join('\n'),
      icon: n ? { id: 'graph' } : { id: 'info', color: 'list.warningForeground' },
      contextValue: TreeItemContext.message,
      collapsible: 'none',
    });
  }
  return rows;
}
