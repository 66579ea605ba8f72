// Owns the TypeScript lint of the sandbox's source: typescript-eslint's recommended rules that use
// type information, over src/ (the generated document types excluded: they are openapi-typescript's
// output, rewritten by every `npm run gen`). A rule that is wrong for one line is disabled on that
// line, with the reason. Two rules have options, and the parity suite reads untyped JSON (all below).
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig([
  globalIgnores(['src/generated/']),
  {
    files: ['src/**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // The code names what it leaves out with a leading underscore: a property taken off an object
      // (`const { secret: _secret, ...rest }`), an argument a signature requires (express's `_next`).
      '@typescript-eslint/no-unused-vars': ['error', {
        argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_',
      }],
      // An ES module import of node:http reads all its exports, and its WebSocket getter loads undici
      // at every start (about 40 ms and 10 MB): the values come from src/node-http.ts, types freely.
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: ['node:http', 'node:https', 'http', 'https'].map((name) => ({
          name, allowTypeImports: true, message: 'Import { http, https } from src/node-http.ts (see why there); type-only imports are fine.',
        })),
      }],
    },
  },
  {
    // The parity suite drives a remote API (the real service or the sandbox) and reads its JSON
    // answers as they come: Exchange.body is `any` on purpose, and every answer's shape is checked
    // at run time against the document (src/parity/shapes.ts). Typing each of its few hundred reads
    // would restate the document by hand, so here, and only here, reading that JSON is allowed.
    files: ['src/parity/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
]);
