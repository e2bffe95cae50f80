/**
 * Pods: defaults (SetDefaults_Pod/PodSpec/Container), validation of the pod spec
 * (also used for the templates of workloads), update rules (a pod's spec is
 * immutable but for images, activeDeadlineSeconds and added tolerations;
 * ephemeral containers come only through the ephemeralcontainers subresource,
 * ephemeralcontainers.ts), selectable fields and graceful deletion (kubernetes
 * pkg/registry/core/pod).
 */
import { defaultPodOnlyFields, defaultPodSpec, objectFieldDiff, validatePodSpecForPod, type KubeObject } from '@kubeling/api';
import { field, jsonEqual } from '@kubeling/apimachinery';
import { qosClass } from '@kubeling/component-helpers';
import type { Strategy } from '../strategy.js';
import { updateEphemeralContainers } from './ephemeralcontainers.js';

type Obj = Record<string, unknown>;
type Container = Obj & {
  name?: string;
  image?: string;
  ports?: (Obj & { containerPort?: number; protocol?: string; name?: string; hostPort?: number })[];
  env?: (Obj & { name?: string; valueFrom?: Obj })[];
  volumeMounts?: (Obj & { name?: string; mountPath?: string })[];
  imagePullPolicy?: string;
  resources?: Obj;
  livenessProbe?: Obj;
  readinessProbe?: Obj;
  startupProbe?: Obj;
};
type PodSpec = Obj & {
  containers?: Container[];
  initContainers?: Container[];
  volumes?: (Obj & { name?: string })[];
  restartPolicy?: string;
  dnsPolicy?: string;
  nodeName?: string;
  terminationGracePeriodSeconds?: number;
  tolerations?: Obj[];
  activeDeadlineSeconds?: number;
};

// Defaults and validation of pod specs live in @kubeling/api (shared by every kind with a pod template).
export { defaultPodSpec, defaultPullPolicy, validatePodSpec } from '@kubeling/api';

const spec = (o: KubeObject) => (o.spec ?? {}) as PodSpec;

export const podStrategy: Strategy = {
  statusSubresource: true,
  returnDeletedObject: true,
  defaults(obj) {
    obj.spec ??= {};
    defaultPodSpec(spec(obj));
    defaultPodOnlyFields(spec(obj));
  },
  prepareForCreate(obj) {
    obj.status = { phase: 'Pending', qosClass: qosClass(spec(obj)) };
  },
  prepareForStatusUpdate(obj, old) {
    // podStatusStrategy: owner references stay (old kubelets corrupted them through status, breaking garbage collection).
    if (old.metadata.ownerReferences) obj.metadata.ownerReferences = structuredClone(old.metadata.ownerReferences);
    else delete obj.metadata.ownerReferences;
  },
  validate(obj) {
    return validatePodSpecForPod(obj.spec, 'spec');
  },
  validateUpdate(obj, old) {
    // Only images, activeDeadlineSeconds, terminationGracePeriodSeconds and added tolerations may change.
    const a = structuredClone(spec(obj));
    const b = structuredClone(spec(old));
    for (const list of ['containers', 'initContainers'] as const) {
      (a[list] ?? []).forEach((c, i) => {
        const o = b[list]?.[i];
        if (o?.image !== undefined) c.image = o.image;
      });
    }
    delete a.activeDeadlineSeconds;
    delete b.activeDeadlineSeconds;
    delete a.terminationGracePeriodSeconds;
    delete b.terminationGracePeriodSeconds;
    const oldTol = b.tolerations ?? [];
    const newTol = a.tolerations ?? [];
    if (newTol.length >= oldTol.length && oldTol.every((t, i) => jsonEqual(t, newTol[i]))) {
      delete a.tolerations;
      delete b.tolerations;
    }
    if (!jsonEqual(a, b)) {
      // Ephemeral containers are not among the updatable fields: changing them here is refused like any other field.
      return [
        field.forbidden(
          'spec',
          `pod updates may not change fields other than \`spec.containers[*].image\`,\`spec.initContainers[*].image\`,\`spec.activeDeadlineSeconds\`,\`spec.tolerations\` (only additions to existing tolerations),\`spec.terminationGracePeriodSeconds\` (allow it to be set to 1 if it was previously negative)\n${objectFieldDiff(b, a)}`,
        ),
      ];
    }
    return [];
  },
  fields(obj) {
    const s = spec(obj);
    const st = (obj.status ?? {}) as { phase?: string; podIP?: string; nominatedNodeName?: string };
    return {
      'spec.nodeName': s.nodeName ?? '',
      'spec.restartPolicy': s.restartPolicy ?? '',
      'spec.schedulerName': (s.schedulerName as string | undefined) ?? '',
      'spec.serviceAccountName': (s.serviceAccountName as string | undefined) ?? '',
      'spec.hostNetwork': String(s.hostNetwork ?? false),
      'status.phase': st.phase ?? '',
      'status.podIP': st.podIP ?? '',
      'status.nominatedNodeName': st.nominatedNodeName ?? '',
    };
  },
  subresourceUpdate: { ephemeralcontainers: updateEphemeralContainers },
  gracePeriod(obj, requested) {
    // An unscheduled or finished pod has nothing to stop: delete at once.
    const phase = (obj.status as { phase?: string } | undefined)?.phase;
    if (!spec(obj).nodeName || phase === 'Succeeded' || phase === 'Failed') return 0;
    const g = requested ?? spec(obj).terminationGracePeriodSeconds ?? 30;
    return g < 0 ? 1 : g;
  },
};
