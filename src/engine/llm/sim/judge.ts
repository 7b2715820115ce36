/**
 * The simulated judge: passes an expectation when every phrase it quotes ("…", '…' or `…`) is in the
 * reply, and one that quotes nothing when the simulated target recognised the task. Deterministic,
 * and labelled simulated in its evidence.
 */
const tag = '[simulated judge]';

export function simJudge(user: string): {
  grades: Array<{ index: number; passed: boolean; evidence: string }>;
} {
  const reply = section(user, 'Reply').toLowerCase();
  const list = section(user, 'Expectations');
  const expectations = [...list.matchAll(/^(\d+)\. (.*)$/gm)].map((m) => ({
    index: Number(m[1]),
    text: m[2],
  }));
  return {
    grades: expectations.map(({ index, text }) => {
      const quoted = [...text.matchAll(/"([^"]+)"|'([^']+)'|`([^`]+)`/g)].map((m) => m[1] ?? m[2] ?? m[3]);
      const missing = quoted.filter((q) => !reply.includes(q.toLowerCase()));
      const recognised = !reply.includes('do not recognise');
      const passed = quoted.length ? missing.length === 0 : recognised;
      const evidence = passed
        ? `${tag} the reply shows it`
        : quoted.length
          ? `${tag} the reply lacks ${missing.map((q) => JSON.stringify(q)).join(', ')}`
          : `${tag} the reply does not address the task`;
      return { index, passed, evidence };
    }),
  };
}

function section(text: string, heading: string): string {
  const start = text.search(new RegExp(`^## ${heading}\\b.*$`, 'm'));
  if (start < 0) return '';
  const body = text.slice(text.indexOf('\n', start) + 1);
  const next = body.search(/^## /m);
  return next < 0 ? body : body.slice(0, next);
}
