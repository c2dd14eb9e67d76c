import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'workspace/', 'openapi/', 'test-artifacts/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Plain-JS bench scripts run on Node: give them Node's globals (TS files get these from the type checker).
    files: ['**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['test/**', 'bench/**', 'scripts/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The client runs in browsers too: web-standard APIs only, nothing from the server side.
    files: ['src/client/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['node:*', '../*'], message: 'src/client must run in browsers' }] }],
      'no-restricted-globals': ['error', 'process', 'Buffer', 'require', '__dirname'],
    },
  },
  // Dependencies point inward: protocol <- engine <- plugins/tools/transports <- routes.
  {
    files: ['src/protocol/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['../*'], message: 'src/protocol imports nothing of ours outside src/protocol' }] }],
    },
  },
  {
    files: ['src/engine/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['../*', '!../protocol'], message: 'src/engine imports only src/protocol (and itself)' }] },
      ],
    },
  },
  {
    // Tool sources, doors without HTTP, stores, and what they share (security, observability, config, reload).
    files: [
      'src/transport/**',
      'src/store/**',
      'src/tools/**',
      'src/a2a/**',
      'src/mcp/**',
      'src/openapi-source/**',
      'src/mcp-server/**',
      'src/a2a-server/**',
      'src/operator-plugins/**',
      'src/security/**',
      'src/observability/**',
      'src/config/**',
      'src/reload/**',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/routes', '**/routes/**'], message: 'the HTTP routes depend on this layer, not the other way round' }] },
      ],
    },
  },
);
