/**
 * ValidatingAdmissionPolicy wired to the apiserver's registry: the admission
 * plugin (plugin.ts) and the type-checking status controller
 * (typechecking.ts), reading resources, params and schemas from the stores
 * the registry holds at the time of each request (custom resources'
 * stores included, as the CRD controller adds them).
 */
import { storageOf } from '@kubeling/api';
import type { Logger } from 'pino';
import { isCustom } from '../../apiextensions/catalog.js';
import type { Store } from '../../registry/store.js';
import { type PolicyPluginContext, ValidatingAdmissionPolicyPlugin } from './plugin.js';
import type { JSONSchemaProps } from '../../apiextensions/types.js';
import { structuralOf, type TypeBoxSchema } from './schema-types.js';
import { type SchemaSource, TypeCheckingController } from './typechecking.js';

export { ValidatingAdmissionPolicyPlugin } from './plugin.js';
export { TypeCheckingController, typeCheck } from './typechecking.js';

/** The structural schema of a store's objects: the CRD's, or the built-in TypeBox schema made structural (once per store). */
const structural = new WeakMap<Store, JSONSchemaProps>();
function schemaOfStore(st: Store): JSONSchemaProps | undefined {
  if (isCustom(st.def)) return st.def.crd.schema;
  let s = structural.get(st);
  if (!s) {
    s = structuralOf(st.def.schema as unknown as TypeBoxSchema);
    structural.set(st, s);
  }
  return s;
}

/** The plugin's and the controller's view of a registry. */
export function registryViews(registry: ReadonlyMap<string, Store>): { context: PolicyPluginContext; schemas: SchemaSource } {
  const stores = () => [...registry.values()];
  const store = (key: string) => {
    const st = registry.get(key);
    if (!st) throw new Error(`no store for ${key}`);
    return st;
  };
  const context: PolicyPluginContext = {
    policies: () => store('admissionregistration.k8s.io/v1/validatingadmissionpolicies'),
    bindings: () => store('admissionregistration.k8s.io/v1/validatingadmissionpolicybindings'),
    namespaces: () => store('/v1/namespaces'),
    resolve(resource) {
      const [g, r] = resource.split('/') as [string, string];
      const st = stores().find((s) => s.def.group === g && s.def.resource === r);
      return st ? { group: g, version: st.def.version, resource: r, kind: st.def.kind, namespaced: st.def.namespaced } : undefined;
    },
    equivalents(gvr) {
      const own = stores().find((s) => s.def.group === gvr.group && s.def.version === gvr.version && s.def.resource === gvr.resource);
      if (!own) return [];
      const where = storageOf(own.def);
      return stores()
        .filter((s) => {
          const w = storageOf(s.def);
          return w.group === where.group && w.resource === where.resource;
        })
        .map((s) => ({
          resource: { group: s.def.group, version: s.def.version, resource: s.def.resource },
          kind: { group: s.def.group, version: s.def.version, kind: s.def.kind },
        }));
    },
    paramSource(group, version, kind) {
      const st = stores().find((s) => s.def.group === group && s.def.version === version && s.def.kind === kind);
      return st ? { reader: st, namespaced: st.def.namespaced } : undefined;
    },
  };
  const schemas: SchemaSource = {
    kindsFor: (group, version, resource) =>
      stores()
        .filter((s) => s.def.group === group && s.def.version === version && s.def.resource === resource)
        .map((s) => ({ kind: s.def.kind, schema: schemaOfStore(s) })),
    schemaOf(group, version, kind) {
      const st = stores().find((s) => s.def.group === group && s.def.version === version && s.def.kind === kind);
      return st ? schemaOfStore(st) : undefined;
    },
  };
  return { context, schemas };
}

/** The plugin to attach to every store, and the controller to start once the caches are ready. */
export function validatingAdmissionPolicy(registry: ReadonlyMap<string, Store>, logger?: Logger) {
  const { context, schemas } = registryViews(registry);
  const plugin = new ValidatingAdmissionPolicyPlugin(context);
  const controller = new TypeCheckingController({ policies: context.policies as () => Store, schemas, ...(logger ? { logger } : {}) });
  return { plugin, controller };
}
