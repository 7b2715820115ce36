/**
 * Runs inside VS Code's extension host (the `extensionTestsPath` of a bench session, see
 * bench/vscode/timings.ts): activates SkillOpt and times it, then opens a candidate review on a
 * 2,000-line skill and times until its decorations are drawn. Prints one `SKILLOPT_BENCH {json}`
 * line, which the driver reads from the workbench's console.
 */
import * as vscode from 'vscode';

interface Fixture {
  skillPath: string;
  runDir: string;
  step: number;
}

interface Drawn {
  drawn?: { added: number[][] };
}

async function until<T>(fn: () => Promise<T | undefined>, what: string, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export async function run(): Promise<void> {
  const out: Record<string, unknown> = {};
  try {
    const fixture = JSON.parse(process.env.SKILLOPT_BENCH_VSCODE ?? '{}') as Fixture;
    const ext = vscode.extensions.getExtension('skillopt.skillopt');
    if (!ext) throw new Error('the SkillOpt extension is not loaded');
    out.activeAtStart = ext.isActive;
    const t0 = performance.now();
    await ext.activate();
    out.activationMs = performance.now() - t0;

    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(fixture.skillPath));
    const editor = await vscode.window.showTextDocument(doc, { preview: false });
    out.skillLines = editor.document.lineCount;
    const uri = editor.document.uri.toString();
    const t1 = performance.now();
    const key = await vscode.commands.executeCommand<string | undefined>('skillopt.review.openCandidate', {
      runId: fixture.runDir,
      runDir: fixture.runDir,
      step: fixture.step,
      skillPath: fixture.skillPath,
    });
    if (!key) throw new Error('the review did not open');
    const added = await until(
      async () => {
        const rows = await vscode.commands.executeCommand<Drawn[]>('skillopt.review.inspect', uri);
        const n = rows?.[0]?.drawn?.added.length ?? 0;
        return n > 0 ? n : undefined;
      },
      'review decorations',
      60_000,
    );
    out.decorationsMs = performance.now() - t1;
    out.decoratedRanges = added;
  } catch (err) {
    out.error = err instanceof Error ? err.message : String(err);
  }
  console.log(`SKILLOPT_BENCH ${JSON.stringify(out)}`);
}
