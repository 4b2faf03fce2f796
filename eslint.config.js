// Lint for the whole repository: typescript-eslint's recommended rules with type information for src/ and test/,
// plus the few rules that keep this codebase's habits (no console or process.exit in core code).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'bench/results/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      eqeqeq: ['error', 'always'],
    },
  },
  {
    // Core code speaks through the injected logger and typed errors; only the process edge and the commands
    // print or exit.
    files: ['src/**/*.ts'],
    ignores: ['src/index.ts', 'src/cli.ts', 'src/commands/**'],
    rules: {
      'no-console': 'error',
      'no-restricted-properties': ['error', { object: 'process', property: 'exit', message: 'Only src/index.ts exits.' }],
    },
  },
  {
    // Test doubles implement async interfaces without awaiting anything, and vitest's asymmetric matchers
    // (expect.stringMatching, ...) are typed `any`.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/require-await': 'off', '@typescript-eslint/no-unsafe-assignment': 'off' },
  },
  {
    // Plain JavaScript (bench, scripts, the bin shim, this file): the recommended rules without type information.
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },
);
