// Layer boundaries are enforced here: the engine, CLI and worker never see `vscode`; src/protocol
// imports only itself; the webview only itself, src/protocol and chart.js (eslint-layers.mjs).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import { layers } from './eslint-layers.mjs';

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
    // Shared by the engine process, the extension host and the browser: nothing but itself.
    files: ['src/protocol/**'],
    plugins: { layers },
    rules: {
      'layers/only-from': [
        'error',
        {
          layer: 'src/protocol',
          folders: ['src/protocol'],
          why: 'Protocol types are shared by Node and the browser.',
        },
      ],
    },
  },
  {
    files: ['src/webview/**'],
    plugins: { layers },
    rules: {
      'layers/only-from': [
        'error',
        {
          layer: 'src/webview',
          folders: ['src/webview', 'src/protocol'],
          packages: ['chart.js'],
          why: 'Webview code runs in a browser and talks to the extension only through messages.',
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
