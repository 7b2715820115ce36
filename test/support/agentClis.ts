import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The agent CLIs scripts/install-agent-clis.mjs installs (npm test runs it first). Undefined when
 * they are not there, with the reason, so a suite can say why it is pending.
 */
export function agentCliBin(): { bin?: string; missing?: string } {
  const dir = resolve(
    process.env.SKILLOPT_AGENT_CLIS_DIR || join(__dirname, '..', '..', '.cache', 'agent-clis'),
    'node_modules',
    '.bin',
  );
  const absent = ['claude', 'codex', 'copilot'].filter((p) => !existsSync(join(dir, p)));
  if (absent.length) {
    return {
      missing: `${absent.join(', ')} not installed in ${dir}: run \`node scripts/install-agent-clis.mjs\` (npm test does)`,
    };
  }
  return { bin: dir };
}
