import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const ROUTES_FENCE = {
  group: ['**/routes', '**/routes/**'],
  message: 'the HTTP routes depend on this layer, not the other way round',
};
// Each layer declares the config sections it reads (its own config.ts); only the assembly (src/*.ts, src/cli, src/reload) imports src/config.
const CONFIG_FENCE = {
  group: ['../config', '../config/**', '../../config', '../../config/**'],
  message:
    "src/config is the assembly's (src/*.ts, src/cli, src/reload): declare the sections this layer reads in its own config.ts",
};

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
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['node:*', '../*'], message: 'src/client must run in browsers' }] },
      ],
      'no-restricted-globals': ['error', 'process', 'Buffer', 'require', '__dirname'],
    },
  },
  // Dependencies point inward: utils, protocol <- engine <- plugins/tools/transports <- routes.
  {
    // Generic structures and helpers, no concept of the gateway's: anything may use them, they use nothing of ours.
    files: ['src/utils/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['../*'], message: 'src/utils imports nothing of ours outside src/utils' },
            { regex: '^(?!node:|\\.)', message: 'src/utils depends on no package (Node built-ins only)' },
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
        { patterns: [{ group: ['../*'], message: 'src/protocol imports nothing of ours outside src/protocol' }] },
      ],
    },
  },
  {
    // The wire shapes several doors and sources share (JSON-RPC, A2A, MCP hints, tool names): leaves, like protocol.
    files: ['src/wire/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['../*'], message: 'src/wire imports nothing of ours outside src/wire' }] },
      ],
    },
  },
  {
    files: ['src/engine/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../*', '!../protocol', '!../utils'],
              message: 'src/engine imports only src/protocol and src/utils (and itself)',
            },
          ],
        },
      ],
    },
  },
  {
    // A folder of the engine (approvals/): the engine's own files one level up, nothing else but src/protocol and src/utils.
    files: ['src/engine/*/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../../*', '!../../protocol', '!../../utils'],
              message: 'src/engine imports only src/protocol and src/utils (and itself)',
            },
          ],
        },
      ],
    },
  },
  {
    // Tool sources, doors without HTTP, stores, and what they share (security, observability).
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
    ],
    rules: {
      'no-restricted-imports': ['error', { patterns: [ROUTES_FENCE, CONFIG_FENCE] }],
    },
  },
  {
    // The config schema and the reloader assemble the layers' sections: they may read them, never the routes.
    files: ['src/config/**', 'src/reload/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [ROUTES_FENCE] }],
    },
  },
  {
    files: ['src/routes/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [CONFIG_FENCE] }],
    },
  },
);
