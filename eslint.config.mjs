// Layer boundaries are enforced here: the engine, CLI and worker never see `vscode`,
// the webview never sees `vscode` or Node built-ins, the protocol sees neither.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

const nodeBuiltins = [
  'fs',
  'path',
  'child_process',
  'os',
  'crypto',
  'http',
  'net',
  'stream',
  'util',
  'events',
];
const noVscode = {
  name: 'vscode',
  message: 'src/engine, src/cli and src/worker must stay editor-agnostic; put editor code in src/extension.',
};

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.skillopt/**',
      '.cache/**',
      'test/fixtures/**',
      'bench/results/**',
      '**/*.mjs',
      '**/*.cjs',
      '**/*.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  prettier,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true },
      ],
      'no-console': 'error',
      eqeqeq: ['error', 'smart'],
    },
  },
  {
    files: ['src/engine/**', 'src/cli/**', 'src/worker/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [noVscode],
          patterns: [
            {
              group: ['**/extension/**', '**/webview/**'],
              message: 'The engine must not depend on UI layers.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/protocol/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            noVscode,
            ...nodeBuiltins.map((name) => ({ name, message: 'Protocol types are shared with the browser.' })),
          ],
        },
      ],
    },
  },
  {
    files: ['src/webview/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            noVscode,
            ...nodeBuiltins.map((name) => ({ name, message: 'Webview code runs in a browser.' })),
          ],
          patterns: [{ group: ['node:*'], message: 'Webview code runs in a browser.' }],
        },
      ],
    },
  },
  {
    files: ['src/cli/**', 'scripts/**', 'bench/**'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['test/**'],
    rules: {
      'no-console': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Tests index fixtures with `!` to say "this exists"; without noUncheckedIndexedAccess the rule calls that redundant.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
    },
  },
);
