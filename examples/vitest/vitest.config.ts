// Vitest runs the TypeScript examples: each test file starts its own sandbox with startSandbox().
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['vitest/**/*.test.ts', 'typed-client/**/*.test.ts'],
    testTimeout: 20_000,
  },
});
