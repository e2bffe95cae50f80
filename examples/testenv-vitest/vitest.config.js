import { defineConfig } from 'vitest/config';

// One etcd for the run (the global setup); each test file starts its own control plane.
export default defineConfig({
  test: { globalSetup: ['@kubeling/testenv/vitest'], testTimeout: 60_000, hookTimeout: 60_000 },
});
