/**
 * The folder a skill is installed in for an agent target (`<skills>/<name>/SKILL.md`): one path
 * segment, so a name can never reach outside the skills folder. The config schema
 * (model.target_skill_name), the front-matter name and the command backend all check this one rule.
 */
export const SKILL_DIR_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export const SKILL_DIR_NAME_RULE =
  'a folder name: letters, digits, ".", "_" and "-", starting with a letter or digit';
