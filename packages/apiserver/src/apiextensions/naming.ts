/**
 * Which names a CRD may be served under (k8s.io/apiextensions-apiserver
 * pkg/controller/status/naming_controller.go): a name another CRD of the same
 * group already serves is refused, and the CRD keeps the names it had; the
 * NamesAccepted condition says which, and Established follows once the names
 * are accepted (pkg/controller/establish).
 */
import type { CustomResourceDefinition, CustomResourceDefinitionCondition, CustomResourceDefinitionNames } from './types.js';

export interface NamingResult {
  acceptedNames: CustomResourceDefinitionNames;
  namesAccepted: CustomResourceDefinitionCondition;
  established: CustomResourceDefinitionCondition | undefined;
}

const inUse = (v: string) => `"${v}" is already in use`;

export function computeNames(crd: CustomResourceDefinition, others: readonly CustomResourceDefinition[]): NamingResult {
  const group = crd.spec.group;
  const plurals = new Set<string>();
  const singulars = new Set<string>();
  const shorts = new Set<string>();
  const kinds = new Set<string>();
  const listKinds = new Set<string>();
  for (const o of others) {
    if (o.metadata.name === crd.metadata.name || o.spec.group !== group) continue;
    const n = o.status?.acceptedNames;
    if (!n) continue;
    if (n.plural) plurals.add(n.plural);
    if (n.singular) singulars.add(n.singular);
    for (const s of n.shortNames ?? []) shorts.add(s);
    if (n.kind) kinds.add(n.kind);
    if (n.listKind) listKinds.add(n.listKind);
  }
  const want = crd.spec.names;
  const previous = crd.status?.acceptedNames;
  let conflict: { reason: string; message: string } | undefined;
  if (plurals.has(want.plural)) conflict = { reason: 'PluralConflict', message: inUse(want.plural) };
  else if (want.singular && singulars.has(want.singular)) conflict = { reason: 'SingularConflict', message: inUse(want.singular) };
  else {
    const s = (want.shortNames ?? []).find((x) => shorts.has(x));
    if (s) conflict = { reason: 'ShortNamesConflict', message: inUse(s) };
    else if (kinds.has(want.kind)) conflict = { reason: 'KindConflict', message: inUse(want.kind) };
    else if (want.listKind && listKinds.has(want.listKind)) conflict = { reason: 'ListKindConflict', message: inUse(want.listKind) };
  }
  const acceptedNames: CustomResourceDefinitionNames = conflict ? (previous ?? { plural: '', kind: '' }) : structuredClone(want);
  const namesAccepted: CustomResourceDefinitionCondition = conflict
    ? { type: 'NamesAccepted', status: 'False', ...conflict }
    : { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' };
  const wasEstablished = crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  let established: CustomResourceDefinitionCondition | undefined;
  if (!wasEstablished) {
    established = conflict
      ? { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' }
      : { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' };
  }
  return { acceptedNames, namesAccepted, established };
}
