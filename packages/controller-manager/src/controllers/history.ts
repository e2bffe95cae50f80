/**
 * ControllerRevisions, as StatefulSets and DaemonSets keep their history
 * (upstream's pkg/controller/history): one revision `<owner>-<hash>` per pod
 * template, numbered in order; returning to an earlier template renumbers its
 * revision as the newest; the data is the template as a `$patch: replace`
 * strategic patch with sorted keys (kubectl compares those bytes before a
 * rollback); old unused revisions go past revisionHistoryLimit.
 */
import { isAlreadyExists, isNotFound } from '@kubeling/apimachinery';
import type { RestClient } from '@kubeling/client';
import { canonical, podTemplateHash } from './deployment/util.js';
import type { ControllerRevision, DaemonSet, PodTemplateSpec, StatefulSet } from './kinds.js';

export const REVISION_HASH_LABEL = 'controller-revision-hash';

const path = (ns: string, name = '') => `/apis/apps/v1/namespaces/${ns}/controllerrevisions${name ? `/${name}` : ''}`;

/** The name of the owner's revision for a template: `<owner>-<hash>`. */
export const revisionName = (owner: StatefulSet | DaemonSet, template: PodTemplateSpec): string => `${owner.metadata.name}-${podTemplateHash(template)}`;

/** The pod template a revision holds (without its `$patch` marker), if it holds one. */
export function revisionTemplate(rev: ControllerRevision | undefined): PodTemplateSpec | undefined {
  const t = (rev?.data as { spec?: { template?: PodTemplateSpec & { $patch?: string } } } | undefined)?.spec?.template;
  if (!t) return undefined;
  const { $patch: _, ...template } = t;
  return template;
}

/**
 * The revision of the owner's current template, created or renumbered as
 * needed. `labelValue` is what pods and the revision carry as
 * controller-revision-hash: the revision name for StatefulSets, the bare hash
 * for DaemonSets.
 */
export async function ensureRevision(
  client: RestClient,
  owner: StatefulSet | DaemonSet,
  kind: string,
  template: PodTemplateSpec,
  revs: readonly ControllerRevision[],
  labelValue: (name: string, hash: string) => string,
): Promise<{ name: string; label: string }> {
  const ns = owner.metadata.namespace!;
  const hash = podTemplateHash(template);
  const name = revisionName(owner, template);
  const label = labelValue(name, hash);
  const top = Math.max(0, ...revs.map((r) => Number(r.revision ?? 0)));
  const same = revs.find((r) => r.metadata.name === name);
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
        labels: { ...(owner.spec?.selector?.matchLabels ?? {}), [REVISION_HASH_LABEL]: label },
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

/** Old revisions beyond the limit, oldest first; those named in `inUse` stay. */
export function revisionsToPrune(revs: readonly ControllerRevision[], inUse: ReadonlySet<string>, limit: number): ControllerRevision[] {
  const old = revs.filter((r) => !inUse.has(r.metadata.name!)).sort((a, b) => Number(a.revision) - Number(b.revision));
  return old.slice(0, Math.max(0, old.length - limit));
}

/** Deletes revisions (gone already is fine). */
export async function deleteRevisions(client: RestClient, ns: string, revs: readonly ControllerRevision[]): Promise<void> {
  for (const r of revs) {
    await client.delete(path(ns, r.metadata.name)).catch((e) => {
      if (!isNotFound(e)) throw e;
    });
  }
}
