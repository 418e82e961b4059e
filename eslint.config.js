// Lint rules for the whole repository. `npm run lint` runs this, the import-cycle check (dpdm, which,
// unlike eslint's cycle rules, also counts type-only imports) and `prettier --check .`.
// Formatting belongs to Prettier (eslint-config-prettier switches off every rule that would argue
// with it); this file keeps to correctness and the layer boundaries.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** `no-restricted-imports` patterns that keep one layer away from another. */
const boundary = (...patterns) => ({
  '@typescript-eslint/no-restricted-imports': ['error', { patterns }],
});

/** The pattern that keeps a file away from src/http, with why. */
const httpLayer = (why) => ({
  group: ['**/http/*', '**/http/**'],
  message: `${why}: import pagination, validation, entity tags and write preconditions from src/api.`,
});

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'coverage/', '.data/', 'clients/**/dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
      // The API refuses control characters on purpose: regexes that match them are meant.
      'no-control-regex': 'off',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-restricted-syntax': [
        'error',
        {
          selector: 'TSAsExpression > TSAsExpression > TSUnknownKeyword',
          message: 'No `as unknown as`: type the row and pick its fields.',
        },
      ],
    },
  },
  {
    files: ['src/**/*.router.ts'],
    rules: boundary(
      { group: ['**/*.repository.js', '**/*.repository'], message: 'Routers call services, never repositories.' },
      { group: ['knex', '**/db/*'], message: 'Routers never touch the database: call a service.' },
    ),
  },
  {
    // Below the routers, a module takes plain values and returns data: what it shares with them
    // (pagination, parsing, entity tags, write preconditions) lives in src/api. Routers, module
    // registrations, OpenAPI registrations and middleware are the HTTP side and may use src/http.
    // Listed before the per-role blocks below, whose options replace these for their files.
    files: ['src/modules/**/*.ts'],
    // src/modules/module.ts is the contract of the module files (what they build, what they return).
    ignores: ['**/*.router.ts', '**/*.module.ts', 'src/modules/module.ts', '**/*.openapi.ts', '**/*.middleware.ts'],
    rules: boundary(httpLayer('Only routers, middleware and module registrations use src/http')),
  },
  {
    files: ['src/api/**/*.ts'],
    rules: boundary(
      { group: ['express', 'express-*'], message: 'src/api is shared by routers and services: no Express here.' },
      httpLayer('src/api sits below src/http'),
    ),
  },
  {
    files: ['src/**/*.service.ts'],
    rules: boundary(
      { group: ['express', 'express-*'], message: 'Services know nothing of HTTP: take plain values.' },
      httpLayer('Services know nothing of HTTP'),
    ),
  },
  {
    files: ['src/**/*.repository.ts'],
    rules: boundary(
      { group: ['**/*.service.js', '**/*.service'], message: 'Repositories never call services.' },
      { group: ['express', 'express-*'], message: 'Repositories know nothing of HTTP.' },
      httpLayer('Repositories return data, never HTTP'),
      {
        group: ['**/errors/*', '**/errors/**'],
        message: 'Repositories never throw HTTP errors: return undefined or let the database error through.',
      },
    ),
  },
  {
    // Modules build on the layers below them (auth, http, db, jobs, ...), never the other way round:
    // a worker, a cache or a middleware that needs a module's data lives in that module, and a type
    // both sides need lives lower. Only the wiring composes modules. The core rule rather than the
    // typescript-eslint one, so that it adds to the per-role boundaries above instead of replacing
    // them (a later block's options for the same rule replace an earlier's); it counts `import type`.
    files: ['src/**/*.ts'],
    ignores: ['src/modules/**', 'src/container.ts', 'src/app.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/modules/**'],
              message:
                'Only src/modules, src/container.ts and src/app.ts import from src/modules: move the code into its module, or the shared type lower.',
            },
          ],
        },
      ],
    },
  },
  {
    // Migrations run against any future version of the code: they never import it.
    files: ['migrations/**/*.ts'],
    rules: boundary({ group: ['../src/*', '../src/**'], message: 'Migrations never import application code.' }),
  },
  {
    // Library internals (private fields, undocumented members) are read only behind the fence of
    // src/platform/, one file per library, each pinned by a test (docs/contributing.md, "Upgrading a library").
    files: ['src/**/*.ts'],
    ignores: ['src/platform/**'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...['acquireConnection', 'releaseConnection', 'readyForQuery', 'processID', 'symbols', 'setPrototypeOf'].map(
          (property) => ({ property, message: 'A library internal: use or extend its fence in src/platform/.' }),
        ),
      ],
    },
  },
  prettier,
);
