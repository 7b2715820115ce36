/**
 * The protected blocks of a skill in the editor: folding ranges (folded by default in skills under
 * optimization), a lock in the gutter, a hover saying who writes the block, and a warning when the
 * person edits inside one. Regions come from the engine's own marker scanner.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { findProtectedRegions, type ProtectedRegion } from '../../engine/skill/document';
import type { Ctx } from '../ctx';
import { isSkillLanguage, skillDocuments } from '../review/languages';
import { isSelfEdit } from '../review/selfEdits';
import { ProvenanceHover } from './provenanceHover';
import type { ReviewLines } from '../review/index';
import { lineStarts, touchedRegion } from './protectedEdits';
import { registerSkillLint } from './skillLint';

/** Folding must not stall on a huge file; a skill is a few kilobytes. */
const maxScanChars = 2_000_000;

const who: Record<ProtectedRegion['kind'], { title: string; body: string }> = {
  slow_update: {
    title: 'Protected slow-update block',
    body: "SkillOpt writes this block at the end of each epoch (the slow update): guidance about failures that persist across epochs. The optimizer's step edits never touch it. Whatever you type between the markers is replaced at the next slow update, so put lasting rules above the block.",
  },
  appendix: {
    title: 'Protected execution-notes appendix',
    body: "SkillOpt's skill-aware reflection writes these notes (optimizer.use_skill_aware_reflection) and consolidates them between steps. Step edits never touch it; your changes here are overwritten when the notes are rewritten.",
  },
};

function regionsOf(doc: vscode.TextDocument): ProtectedRegion[] {
  const text = doc.getText();
  return text.length > maxScanChars ? [] : findProtectedRegions(text);
}

class ProtectedBlocks implements vscode.FoldingRangeProvider, vscode.HoverProvider, vscode.Disposable {
  private readonly lock: vscode.TextEditorDecorationType;
  private readonly block: vscode.TextEditorDecorationType;
  /** Regions of each document as of its last version, to judge the next change against. */
  private readonly known = new Map<string, { regions: ProtectedRegion[]; starts: number[] }>();
  private readonly folded = new Set<string>();
  private readonly warned = new Set<string>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly ctx: Ctx) {
    const media = ctx.extension.extensionUri;
    this.lock = vscode.window.createTextEditorDecorationType({
      light: { gutterIconPath: vscode.Uri.joinPath(media, 'media', 'lock-light.svg') },
      dark: { gutterIconPath: vscode.Uri.joinPath(media, 'media', 'lock-dark.svg') },
      gutterIconSize: '70%',
    });
    this.block = vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor('skillopt.protectedBlockBackground'),
    });
    this.disposables.push(
      this.lock,
      this.block,
      vscode.window.onDidChangeVisibleTextEditors((editors) => editors.forEach((e) => this.decorate(e))),
      vscode.window.onDidChangeActiveTextEditor((e) => {
        if (e) void this.foldOnce(e);
      }),
      vscode.workspace.onDidChangeTextDocument((e) => this.onChange(e)),
      vscode.workspace.onDidCloseTextDocument((d) => this.known.delete(d.uri.toString())),
    );
    for (const e of vscode.window.visibleTextEditors) this.decorate(e);
    const active = vscode.window.activeTextEditor;
    if (active) void this.foldOnce(active);
  }

  provideFoldingRanges(doc: vscode.TextDocument): vscode.FoldingRange[] {
    return regionsOf(doc)
      .filter((r) => r.endLine > r.startLine)
      .map((r) => new vscode.FoldingRange(r.startLine, r.endLine, vscode.FoldingRangeKind.Region));
  }

  provideHover(doc: vscode.TextDocument, pos: vscode.Position): vscode.Hover | undefined {
    const r = regionsOf(doc).find((x) => pos.line === x.startLine || pos.line === x.endLine);
    if (!r) return undefined;
    const text = who[r.kind];
    const md = new vscode.MarkdownString(`$(lock) **${text.title}**\n\n${text.body}`, true);
    md.isTrusted = false;
    return new vscode.Hover(md, doc.lineAt(pos.line).range);
  }

  private decorate(editor: vscode.TextEditor): void {
    if (!isSkillLanguage(editor.document.languageId)) return;
    const regions = regionsOf(editor.document);
    this.remember(editor.document, regions);
    editor.setDecorations(
      this.lock,
      regions.map((r) => new vscode.Range(r.startLine, 0, r.startLine, 0)),
    );
    editor.setDecorations(
      this.block,
      regions.map((r) => new vscode.Range(r.startLine, 0, r.endLine, 0)),
    );
  }

  private remember(doc: vscode.TextDocument, regions = regionsOf(doc)): void {
    this.known.set(doc.uri.toString(), { regions, starts: lineStarts(doc.getText()) });
  }

  /** A skill a run trains, or one with its skillopt.yaml beside it. */
  private underOptimization(doc: vscode.TextDocument): boolean {
    if (doc.uri.scheme !== 'file') return false;
    const path = doc.uri.fsPath;
    if (existsSync(join(dirname(path), 'skillopt.yaml')) || existsSync(join(dirname(path), 'skillopt.yml')))
      return true;
    return this.ctx.runs.list().some((r) => r.config.skill_init === path);
  }

  /** Folds the blocks the first time a skill under optimization is shown; the person's unfolding sticks. */
  private async foldOnce(editor: vscode.TextEditor): Promise<void> {
    const doc = editor.document;
    const key = doc.uri.toString();
    if (!isSkillLanguage(doc.languageId) || this.folded.has(key)) return;
    if (!vscode.workspace.getConfiguration('skillopt').get<boolean>('foldProtectedBlocks', true)) return;
    const lines = regionsOf(doc)
      .filter((r) => r.endLine > r.startLine)
      .map((r) => r.startLine);
    if (lines.length === 0 || !this.underOptimization(doc)) return;
    this.folded.add(key);
    // The folding model asks every provider first; folding before it has our ranges does nothing,
    // so try until the block's first content line is hidden (a few seconds at most).
    for (let attempt = 0; attempt < 20; attempt++) {
      await new Promise((r) => setTimeout(r, 250));
      if (vscode.window.activeTextEditor !== editor) break;
      await vscode.commands.executeCommand('editor.fold', { selectionLines: lines, levels: 1 });
      const hidden = lines.every(
        (l) => !editor.visibleRanges.some((v) => v.start.line <= l + 1 && v.end.line >= l + 1),
      );
      if (hidden) return;
    }
    // Not folded (the person switched away first): try again next time it is shown.
    this.folded.delete(key);
  }

  private onChange(e: vscode.TextDocumentChangeEvent): void {
    const doc = e.document;
    if (!isSkillLanguage(doc.languageId)) return;
    const key = doc.uri.toString();
    const before = this.known.get(key);
    if (before && before.regions.length > 0 && !isSelfEdit(doc.uri) && !this.warned.has(key)) {
      const hit = e.contentChanges
        .map((c) =>
          touchedRegion(before.regions, before.starts, {
            startLine: c.range.start.line,
            startChar: c.range.start.character,
            endLine: c.range.end.line,
            endChar: c.range.end.character,
          }),
        )
        .find((r) => r !== undefined);
      if (hit) this.warn(doc, hit);
    }
    this.remember(doc);
    for (const editor of vscode.window.visibleTextEditors) if (editor.document === doc) this.decorate(editor);
  }

  private warn(doc: vscode.TextDocument, r: ProtectedRegion): void {
    this.warned.add(doc.uri.toString());
    const name = doc.uri.path.split('/').pop() ?? 'the skill';
    const what = r.kind === 'slow_update' ? 'slow-update block' : 'execution-notes appendix';
    const next =
      r.kind === 'slow_update' ? 'the next slow update replaces it' : 'the next consolidation rewrites it';
    void vscode.window.showWarningMessage(
      `You are editing the protected ${what} of ${name}: SkillOpt writes this block and ${next}. Put lasting rules above the block.`,
    );
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** Folding, lock, hover and the edit warning for protected blocks in Markdown skills; SKILL.md lint. */
export function registerLanguage(ctx: Ctx, reviewLines: ReviewLines): void {
  const blocks = new ProtectedBlocks(ctx);
  ctx.pushExtCleanup(blocks);
  ctx.pushExtCleanup(vscode.languages.registerFoldingRangeProvider(skillDocuments, blocks));
  ctx.pushExtCleanup(vscode.languages.registerHoverProvider(skillDocuments, blocks));
  ctx.pushExtCleanup(
    vscode.languages.registerHoverProvider(skillDocuments, new ProvenanceHover(ctx, reviewLines)),
  );
  registerSkillLint(ctx);
}

export { runWithoutProtectedWarning } from '../review/selfEdits';
