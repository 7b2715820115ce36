/**
 * Identifiers the manifest (package.json) and the code must agree on: command ids, the view id,
 * context keys, setting keys and storage keys. One place, so a rename cannot miss a side.
 */
import type { KeyProvider } from '../protocol/vocabulary';

/** Commands contributed in package.json; the palette shows the ones without `when: false`. */
export const Commands = {
  optimizeSkill: 'skillopt.optimizeSkill',
  evaluateSkill: 'skillopt.evaluateSkill',
  checkGateNoise: 'skillopt.checkGateNoise',
  stopRun: 'skillopt.stopRun',
  resumeRun: 'skillopt.resumeRun',
  openRunFolder: 'skillopt.openRunFolder',
  applyBestSkill: 'skillopt.applyBestSkill',
  setApiKey: 'skillopt.setApiKey',
  selectCopilotModel: 'skillopt.selectCopilotModel',
  refreshRuns: 'skillopt.refreshRuns',
  showLog: 'skillopt.showLog',
  cancelProviderBatch: 'skillopt.cancelProviderBatch',
  // Reached from the Runs tree and the status bar only.
  revealRun: 'skillopt.revealRun',
  openStepDiff: 'skillopt.openStepDiff',
  openArtifact: 'skillopt.openArtifact',
  openEvaluation: 'skillopt.openEvaluation',
  // The Runs view's title: its runs grouped by skill, or in one list (setting groupRunsBySkill).
  groupRunsBySkill: 'skillopt.groupRunsBySkill',
  showRunsFlat: 'skillopt.showRunsFlat',
} as const;

export type CommandId = (typeof Commands)[keyof typeof Commands];

/** Review commands other surfaces invoke (registered by review/commands.ts). */
export const ReviewCommands = {
  /** Reopens the review a live run is paused on (its document may have been closed or reverted). */
  openWaiting: 'skillopt.review.openWaiting',
} as const;

export const viewContainerId = 'skillopt';
export const runsViewId = 'skillopt.runs';
export const skillsViewId = 'skillopt.skills';

/** Commands of the Skills view (registered by views/skillsTree.ts). */
export const SkillCommands = {
  optimize: 'skillopt.skills.optimize',
  evaluate: 'skillopt.skills.evaluate',
  open: 'skillopt.skills.open',
  revealLastRun: 'skillopt.skills.revealLastRun',
  create: 'skillopt.skills.create',
} as const;

/** `contextValue` of the Skills view's rows. */
export const SkillTreeContext = {
  skill: 'skillopt.skill',
  /** A skill with a run to reveal. */
  skillWithRun: 'skillopt.skill.run',
} as const;

/** Context keys for `when` clauses. */
export const ContextKeys = {
  /** At least one run is training in the engine right now. */
  runActive: 'skillopt:runActive',
  /** The workspace is untrusted: only browsing runs is possible. */
  limited: 'skillopt:limited',
  /** The Runs view has runs of more than one skill: its title offers grouping by skill or one list. */
  runsOfSeveralSkills: 'skillopt:runsOfSeveralSkills',
} as const;

/** `contextValue` of tree items, matched by `viewItem == ...` in menus. */
export const TreeItemContext = {
  /** The runs of one skill (the Runs view grouped by skill). */
  skillGroup: 'skillopt.skillGroup',
  runLive: 'skillopt.run.live',
  /** A live run paused for the person: its row offers the review beside Stop. */
  runWaiting: 'skillopt.run.live.waiting',
  runResumable: 'skillopt.run.resumable',
  runFinished: 'skillopt.run.finished',
  runOther: 'skillopt.run',
  epoch: 'skillopt.epoch',
  step: 'skillopt.step',
  artifact: 'skillopt.artifact',
  evaluation: 'skillopt.evaluation',
  message: 'skillopt.message',
} as const;

/**
 * Appended to a run's `contextValue` when it is not running and its folder records a provider batch
 * (`skillopt.run.resumable.batch`): menus match it for Cancel Provider Batch.
 */
export const runWithBatchSuffix = '.batch';

/** The SecretStorage key of a provider's API key (providers: `KEY_PROVIDERS` of the vocabulary). */
export function secretKey(provider: KeyProvider): string {
  return `skillopt.apiKey.${provider}`;
}

/** workspaceState: run folder → the config (and skill) it was started from, for Resume. */
export const runOriginsStateKey = 'skillopt.runOrigins';

/** The config file the guided setup writes and Optimize This Skill looks for beside a skill. */
export const configFileName = 'skillopt.yaml';
