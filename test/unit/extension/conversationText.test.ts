import assert from 'node:assert/strict';
import { conversationMarkdown, failingTaskItem } from '../../../src/extension/runs/conversationText';

describe('extension runs: a conversation as a person reads it', () => {
  it('heads the task, the reply and the score, each shown verbatim', () => {
    const md = conversationMarkdown('money-008', [
      { role: 'user', content: 'What is the total?' },
      {
        role: 'assistant',
        content: 'See [this](command:workbench.action.quit) <b>x</b>\n<answer>80.89</answer>',
      },
      { role: 'system', content: '[EVALUATION RESULT] FAIL hard=0 soft=0.00' },
    ]);
    assert.equal(
      md,
      [
        '# Task money-008',
        '',
        '## Task',
        '',
        '```text\nWhat is the total?\n```',
        '',
        '## Target reply',
        '',
        '```text\nSee [this](command:workbench.action.quit) <b>x</b>\n<answer>80.89</answer>\n```',
        '',
        '## Score',
        '',
        '```text\n[EVALUATION RESULT] FAIL hard=0 soft=0.00\n```',
        '',
      ].join('\n'),
    );
  });

  it('keeps a reply that holds a fence inside a longer one, and names errored and odd files', () => {
    const md = conversationMarkdown('t_1', [
      { role: 'assistant', content: 'code:\n```\nrm -rf /\n```' },
      { role: 'system', content: '[TARGET ERROR] 401 Unauthorized' },
    ]);
    assert.match(md, /^# Task t\\_1/);
    assert.match(md, /````text\ncode:\n```\nrm -rf \/\n```\n````/);
    assert.match(md, /## Target error \(not scored\)/);
    assert.match(conversationMarkdown('x', { not: 'a list' }), /not a conversation/);
  });

  it('lists a failing task with its question and what was answered against what was expected', () => {
    const row = {
      id: 'date-005',
      task_description: 'When did\n the meeting start?',
      expected: ['2024-03-05'],
      n_turns: 1,
      hard: 0,
      soft: 0,
      predicted_answer: '5 March 2024',
      response: '',
    };
    assert.deepEqual(failingTaskItem('date-005', row), {
      label: 'date-005',
      description: 'When did the meeting start?',
      detail: 'answered "5 March 2024", expected ["2024-03-05"]',
    });
    const errored = failingTaskItem('x', { ...row, outcome: 'errored', error_kind: 'auth' });
    assert.match(errored.detail ?? '', /^not answered \(auth\)/);
    assert.deepEqual(failingTaskItem('y', undefined), { label: 'y' });
  });

  it("shows a chat target's tool calls with what they returned", () => {
    const md = conversationMarkdown('UID1', [
      { role: 'user', content: 'Question' },
      { type: 'tool_call', turn: 1, cmd: 'grep(pattern="debt", path="/d/a.txt")', obs: '7: Public debt' },
      { role: 'assistant', content: '<answer>1</answer>', turn: 2 },
    ]);
    assert.match(
      md,
      /## Tool call \(turn 1\)\n\n```text\ngrep\(pattern="debt", path="\/d\/a.txt"\)\n```\n\n### Tool result\n\n```text\n7: Public debt\n```\n\n## Target reply/,
    );
  });
});
