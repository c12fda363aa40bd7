/** Jest: sources and tests are compiled by SWC (type checking is `tsc`'s job in `npm test`). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  // 30 s on an idle machine; test/kit/jest-setup.ts scales it by the load measured in each file.
  testTimeout: 30000,
  setupFilesAfterEnv: ['<rootDir>/test/kit/jest-setup.ts'],
  // Integration suites start real processes; two workers match the machine's two cores.
  maxWorkers: 2,
};
