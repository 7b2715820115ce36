/**
 * The SKILL.md lint (src/engine/skill/lint.ts) as editor diagnostics on every SKILL.md in the
 * workspace, updated as the file is typed in and as its package's files come and go, with quick
 * fixes: set `name` to the folder name, trim the description, create a missing file, remove a link.
 */
import { basename, dirname, sep } from 'node:path';
import * as vscode from 'vscode';
import { lintSkillFile, SKILL_FILE_NAME, type LintFinding, type LintRange } from '../../engine/skill/lint';
import { PACKAGE_DIRS } from '../../engine/skill/lintLinks';
import type { Ctx } from '../ctx';

const SOURCE = 'SkillOpt';
/** Run folders hold snapshots of skills, not skills to ship; dependencies are not the user's. */
const EXCLUDE = '**/{node_modules,.git,.skillopt}/**';
const MAX_FILES = 1000;
const DEBOUNCE_MS = 250;

const toRange = (r: LintRange): vscode.Range =>
  new vscode.Range(r.startLine, r.startCol, r.endLine, r.endCol);

function isSkillFile(uri: vscode.Uri): boolean {
  return (
    uri.scheme === 'file' &&
    basename(uri.fsPath) === SKILL_FILE_NAME &&
    !uri.fsPath.split(sep).some((part) => ['node_modules', '.git', '.skillopt'].includes(part))
  );
}

function toDiagnostic(f: LintFinding): vscode.Diagnostic {
  const d = new vscode.Diagnostic(
    toRange(f.range),
    f.message,
    f.severity === 'error' ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning,
  );
  d.source = SOURCE;
  d.code = f.rule;
  return d;
}

class SkillLint implements vscode.CodeActionProvider, vscode.Disposable {
  static readonly metadata: vscode.CodeActionProviderMetadata = {
    providedCodeActionKinds: [vscode.CodeActionKind.QuickFix],
  };
  readonly collection = vscode.languages.createDiagnosticCollection('skillopt-skill-lint');
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly disposables: vscode.Disposable[] = [this.collection];

  constructor() {
    const skills = vscode.workspace.createFileSystemWatcher(`**/${SKILL_FILE_NAME}`);
    const packageFiles = vscode.workspace.createFileSystemWatcher(`**/{${PACKAGE_DIRS.join(',')}}/**`);
    this.disposables.push(
      skills,
      packageFiles,
      skills.onDidCreate((u) => this.lintFolder(u)),
      skills.onDidChange((u) => this.lintFolder(u)),
      skills.onDidDelete((u) => {
        this.collection.delete(u);
        this.lintFolder(u);
      }),
      // A file added to or removed from references/, scripts/ or assets/ settles its skill's links.
      packageFiles.onDidCreate((u) => this.lintOwner(u)),
      packageFiles.onDidDelete((u) => this.lintOwner(u)),
      vscode.workspace.onDidOpenTextDocument((d) => this.schedule(d.uri)),
      vscode.workspace.onDidChangeTextDocument((e) => this.schedule(e.document.uri)),
      // Closed unsaved: what counts again is the file on disk.
      vscode.workspace.onDidCloseTextDocument((d) => this.schedule(d.uri)),
    );
    for (const d of vscode.workspace.textDocuments) this.lint(d.uri);
    void this.scanWorkspace();
  }

  /** Every SKILL.md of the workspace, linted once from disk (open ones from their buffers). */
  private async scanWorkspace(): Promise<void> {
    const files = await vscode.workspace.findFiles(`**/${SKILL_FILE_NAME}`, EXCLUDE, MAX_FILES);
    for (const uri of files) this.lint(uri);
  }

  private schedule(uri: vscode.Uri): void {
    if (!isSkillFile(uri)) return;
    const key = uri.toString();
    clearTimeout(this.timers.get(key));
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        this.lint(uri);
      }, DEBOUNCE_MS),
    );
  }

  lint(uri: vscode.Uri): void {
    if (!isSkillFile(uri)) return;
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    try {
      this.collection.set(uri, lintSkillFile(uri.fsPath, open?.getText()).map(toDiagnostic));
    } catch {
      // Gone or unreadable: nothing to say about it.
      this.collection.delete(uri);
    }
  }

  /** A SKILL.md and the skills beside it, whose shared description budget it changes. */
  private lintFolder(uri: vscode.Uri): void {
    const parent = dirname(dirname(uri.fsPath));
    this.lint(uri);
    this.collection.forEach((other) => {
      if (other.toString() !== uri.toString() && dirname(dirname(other.fsPath)) === parent) this.lint(other);
    });
  }

  /** The skill whose references/, scripts/ or assets/ holds `uri`. */
  private lintOwner(uri: vscode.Uri): void {
    const parts = uri.fsPath.split(sep);
    for (let i = parts.length - 2; i > 0; i--) {
      if ((PACKAGE_DIRS as readonly string[]).includes(parts[i] ?? '')) {
        this.lint(vscode.Uri.file([...parts.slice(0, i), SKILL_FILE_NAME].join(sep)));
      }
    }
  }

  provideCodeActions(
    doc: vscode.TextDocument,
    _range: vscode.Range,
    context: vscode.CodeActionContext,
  ): vscode.CodeAction[] {
    const ours = context.diagnostics.filter((d) => d.source === SOURCE);
    if (ours.length === 0 || !isSkillFile(doc.uri)) return [];
    // Linted afresh: the edits must fit the text as it is now.
    const findings = lintSkillFile(doc.uri.fsPath, doc.getText());
    const actions: vscode.CodeAction[] = [];
    for (const diagnostic of ours) {
      // The same rule at the same place (or line: the marker may lag an edit by a moment).
      const same = findings.filter((f) => f.rule === diagnostic.code);
      const finding =
        same.find((f) => toRange(f.range).isEqual(diagnostic.range)) ??
        same.find((f) => f.range.startLine === diagnostic.range.start.line);
      for (const [i, fix] of (finding?.fixes ?? []).entries()) {
        const action = new vscode.CodeAction(fix.title, vscode.CodeActionKind.QuickFix);
        action.diagnostics = [diagnostic];
        action.isPreferred = i === 0;
        const edit = new vscode.WorkspaceEdit();
        if (fix.edit) edit.replace(doc.uri, toRange(fix.edit.range), fix.edit.newText);
        if (fix.createFile) {
          const file = vscode.Uri.file(fix.createFile);
          edit.createFile(file, { ignoreIfExists: true });
          action.command = { command: 'vscode.open', title: 'Open the new file', arguments: [file] };
        }
        action.edit = edit;
        actions.push(action);
      }
    }
    return actions;
  }

  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** Diagnostics and quick fixes for SKILL.md files: the engine's lint, in the editor. */
export function registerSkillLint(ctx: Ctx): void {
  const lint = new SkillLint();
  ctx.pushExtCleanup(
    lint,
    vscode.languages.registerCodeActionsProvider(
      { scheme: 'file', pattern: `**/${SKILL_FILE_NAME}` },
      lint,
      SkillLint.metadata,
    ),
  );
}
