// Owns the TypeScript lint of the sandbox's source: typescript-eslint's recommended rules that use
// type information, over src/ (the generated document types excluded: they are openapi-typescript's
// output, rewritten by every `npm run gen`). A rule that is wrong for one line is disabled on that
// line, with the reason; no rule is turned off here. One rule has options (below).
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
    },
  },
]);
