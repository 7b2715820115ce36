import assert from 'node:assert/strict';
import { describeAgentRun } from '../../../src/engine/train/trajectories';

describe('what the analysts read about an agent run', () => {
  const run = { exit_code: 0, signal: null, timed_out: false, duration_ms: 2345, stderr: '' };

  it('says whether the skill was loaded, the turns and the tools, from the CLI’s own events', () => {
    const text = describeAgentRun({
      ...run,
      skill_loaded: false,
      turns: 3,
      tool_calls: [{ name: 'Read', detail: 'task.md' }, { name: 'Bash' }],
    });
    assert.equal(text, 'exit 0 after 2.3 s; the skill was NOT loaded; 3 turn(s); tools: Read(task.md), Bash');
  });

  it('claims nothing about a plain-text command, whose activity is unknown', () => {
    assert.equal(describeAgentRun({ ...run, stderr: 'warn\n' }), 'exit 0 after 2.3 s; stderr:\nwarn');
  });
});
