import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/setup-env.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Two cores: emulator + test processes. Files run in parallel on separate emulator projects.
    maxWorkers: 2,
    pool: 'forks',
    reporters: ['default', './test/support/count-reporter.ts']
  }
})
