/**
 * `npm run down [-- --purge]`: stops what `npm run up` started, by the PIDs it
 * recorded (newest first), and with --purge deletes .kubeling/.
 */
import { rmSync } from 'node:fs';
import { STATE, alive, readState } from './cluster.js';

async function main(): Promise<void> {
  const purge = process.argv.includes('--purge');
  const state = readState();
  for (const c of [...(state?.components ?? [])].reverse()) {
    if (!alive(c.pid)) continue;
    process.kill(c.pid, 'SIGTERM');
    const deadline = Date.now() + 10_000;
    while (alive(c.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (alive(c.pid)) process.kill(c.pid, 'SIGKILL');
    console.log(`stopped ${c.name} (pid ${c.pid})`);
  }
  if (purge) {
    rmSync(STATE, { recursive: true, force: true });
    console.log('removed .kubeling/');
  }
  if (!state) console.log('nothing was running');
}

main().catch((e) => {
  console.error(`down: ${(e as Error).message}`);
  process.exit(1);
});
