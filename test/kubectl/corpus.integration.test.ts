/**
 * Real-world manifests (the kubernetes/examples corpus beside the repository):
 * every file whose kinds kubeling serves passes `kubectl apply --dry-run=server`
 * with validation on; files with kinds it does not serve are refused with an error.
 * Skipped when the corpus or kubectl is absent.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { findByKind, parseApiVersion } from '@kubeling/api';
import { Kubectl, kubectlBinaries, request, startTestEnv, type TestEnv } from '@kubeling/testenv';

const CORPUS = fileURLToPath(new URL('../../../shared/corpus/kubernetes-examples', import.meta.url));
const bins = kubectlBinaries();
const skip = !existsSync(CORPUS) ? 'the manifest corpus is not beside the repository' : !bins.default ? 'kubectl is not installed' : false;

function manifests(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...manifests(p));
    else if (/\.ya?ml$/.test(name)) out.push(p);
  }
  return out.sort();
}

interface Entry {
  file: string;
  served: boolean;
  namespaces: string[];
}

/**
 * Served kinds that Kubernetes itself refuses: `protocol: tcp` is not a supported value (only TCP, UDP, SCTP);
 * a ReplicationController whose template has no labels gets no selector (spec.selector: Required value).
 */
const REFUSED_BY_KUBERNETES = [
  '_archived/volumes/aws_ebs/aws-ebs-web.yaml',
  '_archived/volumes/cinder/cinder-web.yaml',
  '_archived/sysdig-cloud/sysdig-rc.yaml',
];

function classify(file: string): Entry | undefined {
  const text = readFileSync(file, 'utf8');
  // Templates with {{placeholders}} are not manifests: some are not even YAML, others are (placeholders in strings). Neither is judged.
  if (text.includes('{{')) return undefined;
  if (REFUSED_BY_KUBERNETES.some((r) => file.endsWith(r))) return { file, served: false, namespaces: [] };
  let docs: unknown[];
  try {
    docs = YAML.parseAllDocuments(text).map((d) => d.toJS());
  } catch {
    return undefined;
  }
  const objs = docs.filter((d): d is { apiVersion?: string; kind?: string; metadata?: { namespace?: string } } => !!d && typeof d === 'object');
  if (!objs.length || objs.some((o) => !o.apiVersion || !o.kind || o.kind === 'List')) return undefined;
  const served = objs.every((o) => {
    const { group, version } = parseApiVersion(o.apiVersion!);
    return !!findByKind(group, version, o.kind!);
  });
  const namespaces = [...new Set(objs.map((o) => o.metadata?.namespace).filter((n): n is string => !!n))];
  return { file, served, namespaces };
}

describe('manifest corpus', { skip }, () => {
  let env: TestEnv;
  let k: Kubectl;
  const entries = skip
    ? []
    : manifests(CORPUS)
        .map(classify)
        .filter((e): e is Entry => !!e);
  before(async () => {
    env = await startTestEnv();
    k = new Kubectl(env.url, bins.default!);
    const wanted = new Set(entries.flatMap((e) => e.namespaces));
    for (const name of wanted) await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  });
  after(async () => {
    k?.cleanup();
    await env?.stop();
  });

  test('served kinds pass server-side dry run with validation; others are refused', async () => {
    const failures: string[] = [];
    let served = 0;
    const queue = [...entries];
    const worker = async () => {
      for (let e = queue.shift(); e; e = queue.shift()) {
        const res = await k.run(['apply', '--dry-run=server', '-f', e.file]);
        const rel = e.file.slice(CORPUS.length + 1);
        if (e.served) {
          served++;
          if (res.code !== 0) failures.push(`${rel}: ${res.stderr.trim().split('\n')[0]}`);
        } else if (res.code === 0) failures.push(`${rel}: unserved kind accepted`);
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    assert.ok(served > 100, `only ${served} manifests of served kinds`);
    assert.deepEqual(failures, []);
  });
});
