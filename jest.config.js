/** @type {import('jest').Config} */
export default {
  testEnvironment: "node",
  extensionsToTreatAsEsm: [".ts"],
  transform: {
    "^.+\\.ts$": [
      "@swc/jest",
      { jsc: { parser: { syntax: "typescript" }, target: "es2022" }, module: { type: "es6" } },
    ],
  },
  testMatch: ["<rootDir>/test/**/*.test.ts"],
  globalSetup: "<rootDir>/test/helpers/global-setup.ts",
  globalTeardown: "<rootDir>/test/helpers/global-teardown.ts",
  testTimeout: 30000,
  reporters: ["default", "<rootDir>/test/helpers/totals-reporter.js"],
};
