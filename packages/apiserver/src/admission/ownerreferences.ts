/**
 * OwnerReferencesPermissionEnforcement (kubernetes plugin/pkg/admission/gc):
 * changing an object's ownerReferences needs `delete` on the object (one could
 * otherwise have the garbage collector delete it), and setting
 * `blockOwnerDeletion` needs `update` on the owner's `finalizers` subresource
 * (it holds the owner's foreground deletion). Pod status writes are exempt, as
 * upstream; a create needs no delete permission ("you could have never
 * created it").
 */
import type { KubeObject } from '@kubeling/api';
import { forbidden, jsonEqual } from '@kubeling/apimachinery';
import type { Attributes, Authorizer } from '../auth/types.js';
import type { AdmissionAttributes, ValidatingAdmission } from './index.js';

interface OwnerRef {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** The resources that serve a kind (the RESTMapper's answer): group, resource and scope. */
export type KindMapper = (group: string, version: string, kind: string) => { group: string; resource: string; namespaced: boolean }[];

export class OwnerReferencesPermissionEnforcement implements ValidatingAdmission {
  readonly name = 'OwnerReferencesPermissionEnforcement';
  constructor(
    private readonly authorizer: () => Authorizer,
    private readonly mapper: KindMapper,
  ) {}

  handles(a: AdmissionAttributes): boolean {
    if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return false;
    if (a.resource === '/pods' && a.subresource === 'status') return false;
    return a.user !== undefined;
  }

  async validate(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    const refs = (obj.metadata.ownerReferences ?? []) as OwnerRef[];
    const oldRefs = a.operation === 'UPDATE' && a.old ? ((a.old.metadata.ownerReferences ?? []) as OwnerRef[]) : undefined;
    if (oldRefs === undefined ? refs.length === 0 : sameRefs(refs, oldRefs)) return;
    const i = a.resource.indexOf('/');
    const gr = { group: a.resource.slice(0, i), resource: a.resource.slice(i + 1) };
    const name = a.name ?? obj.metadata.name ?? obj.metadata.generateName ?? 'Unknown';
    const user = { name: a.user!.name, groups: a.user!.groups };
    const authz = this.authorizer();
    if (a.operation !== 'CREATE') {
      const d = await authz.authorize({
        user,
        verb: 'delete',
        isResourceRequest: true,
        ...(a.namespace ? { namespace: a.namespace } : {}),
        apiGroup: gr.group,
        resource: gr.resource,
        ...(a.subresource ? { subresource: a.subresource } : {}),
        name,
      });
      if (!d.allowed) throw forbidden(gr, name, `cannot set an ownerRef on a resource you can't delete: ${d.reason}, <nil>`);
    }
    const blocking = refs.filter(
      (r) => r.blockOwnerDeletion === true && (oldRefs === undefined || !oldRefs.some((o) => o.uid === r.uid && o.blockOwnerDeletion === true)),
    );
    if (!blocking.length) return;
    // Whoever may update finalizers of anything needs no further look.
    if ((await authz.authorize({ user, verb: 'update', isResourceRequest: true, apiGroup: '*', resource: '*', subresource: 'finalizers', name: '*' })).allowed)
      return;
    for (const ref of blocking) {
      const apiVersion = ref.apiVersion ?? '';
      const slash = apiVersion.indexOf('/');
      const group = slash >= 0 ? apiVersion.slice(0, slash) : '';
      const version = slash >= 0 ? apiVersion.slice(slash + 1) : apiVersion;
      const mappings = apiVersion.split('/').length > 2 ? [] : this.mapper(group, version, ref.kind ?? '');
      if (!mappings.length) {
        throw forbidden(
          gr,
          name,
          `cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion ${apiVersion} Kind ${ref.kind ?? ''}: no matches for kind "${ref.kind ?? ''}" in version "${apiVersion}"`,
        );
      }
      for (const m of mappings) {
        const attrs: Attributes = {
          user,
          verb: 'update',
          isResourceRequest: true,
          ...(m.namespaced && a.namespace ? { namespace: a.namespace } : {}),
          apiGroup: m.group,
          resource: m.resource,
          subresource: 'finalizers',
          ...(ref.name ? { name: ref.name } : {}),
        };
        const d = await authz.authorize(attrs);
        if (!d.allowed)
          throw forbidden(gr, name, `cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: ${d.reason}, <nil>`);
      }
    }
  }
}

/** Upstream compares the lists in order, and a missing boolean differs from false. */
function sameRefs(a: OwnerRef[], b: OwnerRef[]): boolean {
  return a.length === b.length && a.every((r, i) => jsonEqual(r, b[i]));
}
