import { defineConfig } from 'vitest/config';

/** `npm run chaos`: the chaos run alone (not part of `npm test`; .ci/run runs its short form after the suite). */
export default defineConfig({
  test: {
    include: ['test/chaos/**/*.chaos.ts'],
    testTimeout: 1_200_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
