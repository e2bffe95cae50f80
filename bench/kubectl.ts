/**
 * CLI benchmark: wall time of one command with bin/kubectl (our kubectl, as
 * users run it) and with the real kubectl, against the same apiserver, after
 * a warm-up run of each (discovery cached, bundle built). Prints the median
 * and p90 per command and the ratio of medians.
 *
 *   npm run bench:kubectl [-- --runs 20]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { kubectlBinaries, startTestEnv } from '@kubeling/testenv';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '20' } } });
const RUNS = Number(values.runs);
const OURS = fileURLToPath(new URL('../bin/kubectl', import.meta.url));

const env = await startTestEnv({ apiserverProcess: true });
const dir = mkdtempSync(join(tmpdir(), 'bench-kubectl-'));
try {
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters: [{name: b, cluster: {server: "${env.url}"}}]\nusers: [{name: b, user: {}}]\ncontexts: [{name: b, context: {cluster: b, user: b, namespace: default}}]\ncurrent-context: b\n`,
  );
  const real = kubectlBinaries().default;
  const clis: [string, string][] = [['bin/kubectl', OURS], ...(real ? ([['kubectl', real]] as [string, string][]) : [])];
  const commands = [
    ['get', 'namespaces'],
    ['get', 'namespace', 'default', '-o', 'yaml'],
    ['create', 'configmap', 'bench-%d', '--from-literal=a=1'],
  ];
  const medians: Record<string, number[]> = {};
  for (const [name, bin] of clis) {
    const cache = join(dir, `cache-${name.replace('/', '-')}`);
    const runOnce = (args: string[], i: number) => {
      const t = performance.now();
      execFileSync(bin, [`--kubeconfig=${kubeconfig}`, `--cache-dir=${cache}`, ...args.map((a) => a.replace('%d', `${name.length}-${i}`))], {
        stdio: 'ignore',
        env: { ...process.env, KUBECONFIG: '', HOME: dir },
      });
      return performance.now() - t;
    };
    runOnce(['get', 'namespaces'], -1);
    for (const [c, args] of commands.entries()) {
      const times = Array.from({ length: RUNS }, (_, i) => runOnce(args, i)).sort((a, b) => a - b);
      const med = times[Math.floor(times.length / 2)]!;
      const p90 = times[Math.floor(times.length * 0.9)]!;
      (medians[name] ??= [])[c] = med;
      console.log(`${name.padEnd(12)} ${args.join(' ').replace('%d', 'N').padEnd(44)} median ${med.toFixed(0)} ms  p90 ${p90.toFixed(0)} ms`);
    }
  }
  if (medians.kubectl) {
    for (const [c, args] of commands.entries())
      console.log(`ratio (ours / real) ${args.slice(0, 2).join(' ').padEnd(30)} ${(medians['bin/kubectl']![c]! / medians.kubectl[c]!).toFixed(2)}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
  await env.stop();
}
