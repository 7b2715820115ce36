// A lint rule for layers that may import only from named folders (relative to this file) and packages.
// It resolves each relative import against the importing file, so `../host` from src/webview/charts
// stays allowed while `../engine/x` from src/webview does not: a path pattern cannot tell them apart.
import { isAbsolute, relative, resolve, dirname } from 'node:path';

/** @type {import('eslint').Rule.RuleModule} */
const onlyFrom = {
  meta: {
    type: 'problem',
    docs: { description: 'Allow imports only from the given folders and packages.' },
    schema: [
      {
        type: 'object',
        properties: {
          layer: { type: 'string' },
          folders: { type: 'array', items: { type: 'string' } },
          packages: { type: 'array', items: { type: 'string' } },
          why: { type: 'string' },
        },
        required: ['layer', 'folders'],
        additionalProperties: false,
      },
    ],
  },
  create(context) {
    const { layer, folders, packages = [], why = '' } = context.options[0];
    const root = import.meta.dirname;
    const allowed = folders.map((f) => resolve(root, f));
    const inside = (target, folder) => {
      const rel = relative(folder, target);
      return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
    };
    const check = (node, source) => {
      if (typeof source !== 'string') return;
      let problem;
      if (source.startsWith('.') || isAbsolute(source)) {
        const target = resolve(dirname(context.filename), source);
        if (!allowed.some((f) => inside(target, f)))
          problem = `'${source}' resolves to ${relative(root, target) || '.'}`;
      } else if (!packages.some((p) => source === p || source.startsWith(`${p}/`))) {
        problem = `'${source}' is a package or Node built-in`;
      }
      if (problem) {
        const from = [...folders, ...packages].join(', ');
        context.report({ node, message: `${layer} may import only from ${from}: ${problem}. ${why}`.trim() });
      }
    };
    const fromSource = (node) => check(node.source ?? node, node.source?.value);
    return {
      ImportDeclaration: fromSource,
      ExportNamedDeclaration: (node) => node.source && fromSource(node),
      ExportAllDeclaration: fromSource,
      ImportExpression: (node) => check(node, node.source.type === 'Literal' ? node.source.value : undefined),
      TSImportEqualsDeclaration: (node) =>
        node.moduleReference.type === 'TSExternalModuleReference' &&
        check(node, node.moduleReference.expression.value),
    };
  },
};

export const layers = { rules: { 'only-from': onlyFrom } };
