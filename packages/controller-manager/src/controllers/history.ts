/**
 * ControllerRevisions, as StatefulSets and DaemonSets keep their history
 * (upstream's pkg/controller/history): one revision `<owner>-<hash>` per pod
 * template, numbered in order; returning to an earlier template renumbers its
 * revision as the newest; the data is the template as a `$patch: replace`
 * strategic patch with sorted keys (kubectl compares those bytes before a
 * rollback); old unused revisions go past revisionHistoryLimit.
 */
import type { KubeObject } from '@kubeling/api';
import { isAlreadyExists, isNotFound } from '@kubeling/apimachinery';
import type { RestClient } from '@kubeling/client';
import { canonical, podTemplateHash } from './deployment/util.js';

type Obj = Record<string, any>;

export const REVISION_HASH_LABEL = 'controller-revision-hash';

const path = (ns: string, name = '') => `/apis/apps/v1/namespaces/${ns}/controllerrevisions${name ? `/${name}` : ''}`;

/**
 * The revision of the owner's current template, created or renumbered as
 * needed. `labelValue` is what pods and the revision carry as
 * controller-revision-hash: the revision name for StatefulSets, the bare hash
 * for DaemonSets.
 */
export async function ensureRevision(client: RestClient, owner: KubeObject, kind: string, template: Obj, revs: KubeObject[], labelValue: (name: string, hash: string) => string): Promise<{ name: string; label: string }> {
  const ns = owner.metadata.namespace!;
  const hash = podTemplateHash(template);
  const name = `${owner.metadata.name}-${hash}`;
  const label = labelValue(name, hash);
  const top = Math.max(0, ...revs.map((r) => Number((r as Obj).revision ?? 0)));
  const same = revs.find((r) => r.metadata.name === name) as Obj | undefined;
  if (same) {
    // Back to an earlier template (a rollback): that revision becomes the newest, as upstream renumbers it.
    if (Number(same.revision) < top) {
      await client.patch(path(ns, name), { revision: top + 1 }, 'application/merge-patch+json').catch((e) => {
        if (!isNotFound(e)) throw e;
      });
    }
    return { name, label };
  }
  try {
    await client.post(path(ns), {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        name,
        labels: { ...((owner.spec as Obj).selector?.matchLabels ?? {}), [REVISION_HASH_LABEL]: label },
        // The owner's annotations (change-cause among them) go with each revision, as upstream.
        ...(owner.metadata.annotations ? { annotations: { ...owner.metadata.annotations } } : {}),
        ownerReferences: [{ apiVersion: 'apps/v1', kind, name: owner.metadata.name, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true }],
      },
      data: JSON.parse(canonical({ spec: { template: { ...template, $patch: 'replace' } } })),
      revision: top + 1,
    });
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
  }
  return { name, label };
}

/** Old revisions beyond the limit go, oldest first; those named in `inUse` stay. */
export async function pruneRevisions(client: RestClient, ns: string, revs: KubeObject[], inUse: Set<string>, limit: number): Promise<void> {
  const old = revs.filter((r) => !inUse.has(r.metadata.name!)).sort((a, b) => Number((a as Obj).revision) - Number((b as Obj).revision));
  for (const r of old.slice(0, Math.max(0, old.length - limit))) {
    await client.delete(path(ns, r.metadata.name)).catch((e) => {
      if (!isNotFound(e)) throw e;
    });
  }
}
