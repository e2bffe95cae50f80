/**
 * The Priority admission plugin (plugin/pkg/admission/priority): a new pod's
 * `priority` and `preemptionPolicy` come from its PriorityClass — the one it
 * names, else the cluster's globalDefault class, else 0. Naming a class that
 * does not exist, or giving an integer priority that disagrees with the class,
 * is Forbidden. The two system classes exist from the start.
 */
import type { KubeObject } from '@kubeling/api';
import { forbidden, isAlreadyExists, isNotFound } from '@kubeling/apimachinery';
import type { AdmissionAttributes, MutatingAdmission } from './index.js';
import type { ObjectCreator, ObjectReader } from './lookups.js';

export const SYSTEM_PRIORITY_CLASSES = [
  { name: 'system-node-critical', value: 2000001000, description: 'Used for system critical pods that must not be moved from their current node.' },
  {
    name: 'system-cluster-critical',
    value: 2000000000,
    description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
  },
];

interface PriorityClass extends KubeObject {
  value: number;
  globalDefault?: boolean;
  preemptionPolicy?: string;
}

export class PriorityAdmission implements MutatingAdmission {
  readonly name = 'Priority';

  constructor(private readonly classes: () => ObjectReader) {}

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && a.resource === '/pods';
  }

  private async defaultClass(): Promise<PriorityClass | undefined> {
    const { items } = await this.classes().list(undefined, { resourceVersion: '0' });
    let best: PriorityClass | undefined;
    for (const pc of items as PriorityClass[]) if (pc.globalDefault && (!best || pc.value < best.value)) best = pc;
    return best;
  }

  async admit(pod: KubeObject, _a: AdmissionAttributes): Promise<void> {
    const spec = (pod.spec ??= {}) as { priorityClassName?: string; priority?: number; preemptionPolicy?: string };
    const gr = { group: '', resource: 'pods' };
    const name = pod.metadata.name ?? '';
    let pc: PriorityClass | undefined;
    if (spec.priorityClassName) {
      pc = (await this.classes()
        .get(undefined, spec.priorityClassName, '0')
        .catch((e) => {
          if (isNotFound(e)) return undefined;
          throw e;
        })) as PriorityClass | undefined;
      if (!pc) throw forbidden(gr, name, `no PriorityClass with name ${spec.priorityClassName} was found`);
    } else {
      pc = await this.defaultClass();
      if (pc) spec.priorityClassName = pc.metadata.name!;
    }
    const value = pc?.value ?? 0;
    if (spec.priority !== undefined && spec.priority !== null && spec.priority !== value) {
      throw forbidden(
        gr,
        name,
        `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${value} from the given PriorityClass name`,
      );
    }
    spec.priority = value;
    spec.preemptionPolicy ??= pc?.preemptionPolicy ?? 'PreemptLowerPriority';
  }
}

/** Creates the system PriorityClasses when missing (the apiserver's post-start hook). */
export async function ensureSystemPriorityClasses(store: ObjectCreator): Promise<void> {
  await Promise.all(
    SYSTEM_PRIORITY_CLASSES.map(async (c) => {
      try {
        await store.create(undefined, {
          apiVersion: 'scheduling.k8s.io/v1',
          kind: 'PriorityClass',
          metadata: { name: c.name },
          value: c.value,
          description: c.description,
        } as KubeObject);
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
      }
    }),
  );
}
