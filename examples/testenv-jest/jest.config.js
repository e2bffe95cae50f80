// One etcd for the run (the global setup and teardown); each test file starts its own control plane.
export default {
  testEnvironment: 'node',
  transform: {},
  testTimeout: 60_000,
  globalSetup: '@kubeling/testenv/jest-global-setup',
  globalTeardown: '@kubeling/testenv/jest-global-teardown',
};
