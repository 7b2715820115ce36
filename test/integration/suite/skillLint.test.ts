/**
 * SKILL.md lint in a real VS Code: a bad skill opened in the editor gets SkillOpt's diagnostics,
 * the quick fixes the code-action provider offers repair it (name from the folder, trimmed
 * description, the missing reference file created), and typing brings a finding back.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { skillopt, waitFor, workspacePath } from './support';

const long = Array.from({ length: 260 }, (_, i) => `word${i}`).join(' ');
const bad = [
  '---', // 0
  'name: pdf-filler', // 1
  `description: ${long}`, // 2
  '---', // 3
  '# PDF forms', // 4
  '', // 5
  'Read [the field guide](references/fields.md) first.', // 6
  '',
].join('\n');

function ours(uri: vscode.Uri): vscode.Diagnostic[] {
  return vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'SkillOpt');
}
const code = (d: vscode.Diagnostic): string => (typeof d.code === 'string' ? d.code : '');
const codes = (uri: vscode.Uri): string[] => ours(uri).map(code);

/** The quick fix titled `title` for our `code` diagnostic (the workbench gets markers a moment after the host). */
async function quickFix(uri: vscode.Uri, code: string, title: RegExp): Promise<vscode.CodeAction> {
  let seen: string[] = [];
  try {
    return await waitFor(
      async () => {
        const diagnostic = ours(uri).find((d) => d.code === code);
        if (!diagnostic) return undefined;
        const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>(
          'vscode.executeCodeActionProvider',
          uri,
          diagnostic.range,
          vscode.CodeActionKind.QuickFix.value,
        );
        seen = actions.map((a) => a.title);
        return actions.find((a) => title.test(a.title) && a.edit);
      },
      `the quick fix ${String(title)}`,
      10_000,
    );
  } catch (err) {
    throw new Error(
      `${String(err)}; diagnostics ${JSON.stringify(codes(uri))}, actions ${seen.join(' | ')}`,
      {
        cause: err,
      },
    );
  }
}

describe('SKILL.md lint in the editor', function () {
  this.timeout(60_000);
  let folder = '';
  let uri: vscode.Uri;

  before(async () => {
    await skillopt();
    folder = workspacePath('lint-demo', 'pdf-forms');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'SKILL.md'), bad);
    uri = vscode.Uri.file(join(folder, 'SKILL.md'));
  });
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    rmSync(workspacePath('lint-demo'), { recursive: true, force: true });
  });

  it('shows the findings of a bad skill where they are, with their severity', async () => {
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    await waitFor(() => codes(uri).length === 3, 'three SkillOpt diagnostics');
    const byCode = new Map(ours(uri).map((d) => [code(d), d]));
    const name = byCode.get('name-folder');
    assert.equal(name?.severity, vscode.DiagnosticSeverity.Error);
    assert.deepEqual(name?.range, new vscode.Range(1, 6, 1, 16));
    assert.match(name?.message ?? '', /"pdf-filler" is not the name of its folder "pdf-forms"/);
    assert.equal(byCode.get('description-length')?.severity, vscode.DiagnosticSeverity.Error);
    const link = byCode.get('link-broken');
    assert.equal(link?.severity, vscode.DiagnosticSeverity.Warning);
    assert.deepEqual(link?.range, new vscode.Range(6, 5, 6, 44));
  });

  it('renames the name to the folder name with a quick fix', async () => {
    const action = await quickFix(uri, 'name-folder', /Set name to the folder name "pdf-forms"/);
    assert.equal(action.isPreferred, true);
    assert.ok(await vscode.workspace.applyEdit(action.edit!));
    const doc = await vscode.workspace.openTextDocument(uri);
    assert.equal(doc.lineAt(1).text, 'name: pdf-forms');
    await waitFor(() => !codes(uri).includes('name-folder'), 'the name finding to clear');
  });

  it('trims the description to the limit with a quick fix', async () => {
    const action = await quickFix(uri, 'description-length', /Trim the description/);
    assert.ok(await vscode.workspace.applyEdit(action.edit!));
    await waitFor(() => !codes(uri).includes('description-length'), 'the description finding to clear');
    const doc = await vscode.workspace.openTextDocument(uri);
    assert.ok(doc.lineAt(2).text.length <= 'description: '.length + 1024, doc.lineAt(2).text);
    assert.equal(doc.lineAt(3).text, '---');
  });

  it('creates the missing reference file with a quick fix, or offers to remove the link', async () => {
    const remove = await quickFix(uri, 'link-broken', /Remove the link to references\/fields\.md/);
    assert.equal(remove.isPreferred, false);
    const create = await quickFix(uri, 'link-broken', /Create references\/fields\.md/);
    assert.ok(await vscode.workspace.applyEdit(create.edit!));
    assert.ok(existsSync(join(folder, 'references', 'fields.md')));
    // Then the new file opens (the API's vscode.open, as the workbench names it).
    assert.equal(
      (create.command?.arguments?.[0] as vscode.Uri | undefined)?.fsPath,
      join(folder, 'references', 'fields.md'),
    );
    await waitFor(() => codes(uri).length === 0, 'no SkillOpt diagnostic left', 20_000);
  });

  it('brings a finding back as the person types', async () => {
    const editor = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    await editor.edit((e) => e.replace(new vscode.Range(1, 6, 1, 15), 'Pdf_Forms'));
    await waitFor(
      () => codes(uri).includes('name-folder') && codes(uri).includes('name-format'),
      'the name findings for the typed name',
    );
  });
});
