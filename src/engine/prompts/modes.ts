export type UpdateMode = 'patch' | 'rewrite_from_suggestions' | 'full_rewrite_minibatch';

/** JSON key that holds a stage's items, per update mode (reference-compatible). */
export function payloadKey(mode: UpdateMode): 'edits' | 'revise_suggestions' | 'skill_candidates' {
  return mode === 'patch'
    ? 'edits'
    : mode === 'rewrite_from_suggestions'
      ? 'revise_suggestions'
      : 'skill_candidates';
}
