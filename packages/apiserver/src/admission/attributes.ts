/**
 * Helpers over admission attributes that several plugins share
 * (k8s.io/apiserver pkg/admission: errors.go NewForbidden, handler.go
 * NewHandler).
 */
import type { KubeObject } from '@kubeling/api';
import { forbidden, StatusError, type GroupResource } from '@kubeling/apimachinery';
import type { AdmissionAttributes, MutatingAdmission, Operation, ValidatingAdmission } from './index.js';

/** The request's group and resource (`a.resource` is `group/resource`). */
export function groupResourceOf(a: AdmissionAttributes): GroupResource {
  const i = a.resource.indexOf('/');
  return { group: a.resource.slice(0, i), resource: a.resource.slice(i + 1) };
}

/**
 * admission.NewForbidden: `<resource> "<name>" is forbidden: <why>`, the name
 * being the request's, else the object's, else its generateName, else
 * "Unknown". A Forbidden StatusError is returned as it is (never wrapped twice).
 */
export function admissionForbidden(a: AdmissionAttributes, obj: KubeObject | undefined, why: string | Error): StatusError {
  if (why instanceof StatusError && why.status.reason === 'Forbidden') return why;
  const name = a.name || obj?.metadata?.name || obj?.metadata?.generateName || 'Unknown';
  return forbidden(groupResourceOf(a), name, typeof why === 'string' ? why : why.message);
}

/**
 * A plugin that handles only `operations` (upstream's admission.NewHandler),
 * for plugins written before CONNECT reached admission: anything else passes
 * it by.
 */
export class OperationFilter implements MutatingAdmission, ValidatingAdmission {
  readonly name: string;
  readonly deleted?: (obj: KubeObject, a: AdmissionAttributes) => Promise<void>;

  constructor(
    private readonly operations: readonly Operation[],
    private readonly plugin: Partial<MutatingAdmission & ValidatingAdmission> & { name: string; handles(a: AdmissionAttributes): boolean },
  ) {
    this.name = plugin.name;
    if (plugin.deleted) this.deleted = (obj, a) => plugin.deleted!(obj, a);
  }

  handles(a: AdmissionAttributes): boolean {
    return this.operations.includes(a.operation) && this.plugin.handles(a);
  }

  async admit(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    await this.plugin.admit?.(obj, a);
  }

  async validate(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    await this.plugin.validate?.(obj, a);
  }
}
