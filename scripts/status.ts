/** `npm run status`: each component of the local cluster, its PID and health. */
import { alive, healthy, readState } from './cluster.js';

async function main(): Promise<void> {
  const state = readState();
  if (!state) {
    console.log('no cluster: run `npm run up`');
    process.exit(1);
  }
  let bad = 0;
  for (const c of state.components) {
    const up = alive(c.pid);
    const ok = up && (await healthy(c.health));
    if (!ok) bad++;
    console.log(`${c.name.padEnd(20)} pid ${String(c.pid).padEnd(8)} ${up ? (ok ? 'healthy' : 'unhealthy') : 'not running'}`);
  }
  process.exit(bad ? 1 : 0);
}

void main();
