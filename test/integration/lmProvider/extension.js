// Test-only language model provider (VS Code >= 1.104): one deterministic chat model that the
// SkillOpt integration tests reach through vscode.lm, exactly as Copilot's models would be.
// It answers the house-style date questions correctly and everything else wrongly, so a score
// computed through it is known in advance, and it records every request it served. Each answer
// takes a little while, like a real model, so a run through it can be stopped midway.
// Plain JavaScript: its API (registerLanguageModelChatProvider) is newer than the @types/vscode
// the extension itself is compiled against.
const vscode = require('vscode');

const answerDelayMs = 100;

/** Requests served, newest last: { model, messages: [{ role, text }] }. */
const served = [];

/** When set, every request fails like this ('blocked' | 'noPermissions' | 'other'). */
let failWith;

const months = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/** "Rewrite the date "January 17, 2027" in house style." -> 2027-01-17 */
function answer(question) {
  const m = /"([A-Za-z]+) (\d{1,2}), (\d{4})"/.exec(question);
  if (m && /date/i.test(question)) {
    const month = months.indexOf(m[1].toLowerCase()) + 1;
    if (month > 0) {
      return `${m[3]}-${String(month).padStart(2, '0')}-${String(Number(m[2])).padStart(2, '0')}`;
    }
  }
  return 'I do not know';
}

function textOf(message) {
  return message.content
    .map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : ''))
    .join('');
}

function roleOf(message) {
  return message.role === vscode.LanguageModelChatMessageRole.Assistant ? 'assistant' : 'user';
}

const model = {
  id: 'skillopt-test-dates',
  name: 'SkillOpt Test Dates',
  family: 'test-dates',
  version: '1.0.0',
  maxInputTokens: 100000,
  maxOutputTokens: 4000,
  tooltip: 'Answers date questions in house style; test only.',
  capabilities: {},
};

exports.activate = function activate(context) {
  context.subscriptions.push(
    vscode.lm.registerLanguageModelChatProvider('skillopt-test', {
      provideLanguageModelChatInformation: () => [model],
      provideLanguageModelChatResponse: async (info, messages, _options, progress, token) => {
        const turns = messages.map((m) => ({ role: roleOf(m), text: textOf(m) }));
        served.push({ model: info.id, messages: turns });
        if (failWith === 'blocked') throw vscode.LanguageModelError.Blocked('Test quota exhausted');
        if (failWith === 'noPermissions') throw vscode.LanguageModelError.NoPermissions('Test access denied');
        if (failWith === 'other') throw new Error('Test model crashed');
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, answerDelayMs);
          token.onCancellationRequested(() => {
            clearTimeout(timer);
            resolve();
          });
        });
        if (token.isCancellationRequested) throw new vscode.CancellationError();
        const last = turns.filter((t) => t.role === 'user').at(-1);
        progress.report(
          new vscode.LanguageModelTextPart(`Thinking.\n<answer>${answer(last ? last.text : '')}</answer>`),
        );
      },
      provideTokenCount: async (_info, text) => {
        const s = typeof text === 'string' ? text : textOf(text);
        return Math.ceil(s.length / 4);
      },
    }),
    vscode.commands.registerCommand('skilloptTest.lmRequests', () => served.slice()),
    vscode.commands.registerCommand('skilloptTest.resetLm', () => {
      served.length = 0;
      failWith = undefined;
    }),
    vscode.commands.registerCommand('skilloptTest.failLm', (mode) => {
      failWith = mode;
    }),
  );
};
