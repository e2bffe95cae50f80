/**
 * Pods: defaults (SetDefaults_Pod/PodSpec/Container), validation of the pod spec
 * (also used for the templates of workloads), update rules (a pod's spec is
 * immutable but for images, activeDeadlineSeconds and added tolerations),
 * selectable fields and graceful deletion (kubernetes pkg/registry/core/pod).
 */
import { defaultVolume, validateResourceRequirements, validateVolumeSource, type KubeObject } from '@kubeling/api';
import { field, isDNS1123Label, isDNS1123Subdomain, isEnvVarName, isValidPortName, jsonEqual, validateLabels, type FieldError } from '@kubeling/apimachinery';
import type { Strategy } from '../strategy.js';

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

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

/** `nginx` / `nginx:latest` → Always; any other tag or a digest → IfNotPresent. */
export function defaultPullPolicy(image: string | undefined): string {
  if (!image) return 'IfNotPresent';
  if (image.includes('@')) return 'IfNotPresent';
  const lastSlash = image.lastIndexOf('/');
  const colon = image.indexOf(':', lastSlash + 1);
  if (colon < 0) return 'Always';
  return image.slice(colon + 1) === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultProbe(p: Obj | undefined): void {
  if (!p) return;
  p.timeoutSeconds ??= 1;
  p.periodSeconds ??= 10;
  p.successThreshold ??= 1;
  p.failureThreshold ??= 3;
  const http = p.httpGet as Obj | undefined;
  if (http) {
    http.scheme ??= 'HTTP';
    http.path ??= '/';
  }
}

function defaultContainer(c: Container): void {
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  c.imagePullPolicy ??= defaultPullPolicy(c.image);
  c.resources ??= {};
  for (const p of c.ports ?? []) p.protocol ??= 'TCP';
  for (const e of c.env ?? []) {
    const fieldRef = e.valueFrom?.fieldRef as Obj | undefined;
    if (fieldRef) fieldRef.apiVersion ??= 'v1';
  }
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
}

/** SetDefaults for a PodSpec (pods and workload templates). */
export function defaultPodSpec(spec: PodSpec | undefined): void {
  if (!spec) return;
  spec.restartPolicy ??= 'Always';
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.securityContext ??= {};
  spec.schedulerName ??= 'default-scheduler';
  spec.enableServiceLinks ??= true;
  for (const c of spec.containers ?? []) defaultContainer(c);
  for (const c of spec.initContainers ?? []) defaultContainer(c);
  for (const v of spec.volumes ?? []) {
    defaultVolume(v);
    for (const kind of ['configMap', 'secret'] as const) {
      const src = v[kind] as Obj | undefined;
      if (src) src.defaultMode ??= 420;
    }
    const projected = v.projected as Obj | undefined;
    if (projected) projected.defaultMode ??= 420;
    const dapi = v.downwardAPI as Obj | undefined;
    if (dapi) dapi.defaultMode ??= 420;
    const hostPath = v.hostPath as Obj | undefined;
    if (hostPath) hostPath.type ??= '';
  }
}

function validateContainers(list: Container[] | undefined, path: string, volumes: Set<string>, required: boolean, names: Set<string>, claims: ReadonlySet<string>): FieldError[] {
  const errs: FieldError[] = [];
  if (!list || list.length === 0) {
    if (required) errs.push(field.required(path, ''));
    return errs;
  }
  list.forEach((c, i) => {
    const p = `${path}[${i}]`;
    if (!c.name) errs.push(field.required(`${p}.name`, ''));
    else {
      for (const m of isDNS1123Label(c.name)) errs.push(field.invalid(`${p}.name`, c.name, m));
      if (names.has(c.name)) errs.push(field.duplicate(`${p}.name`, c.name));
      names.add(c.name);
    }
    if (!c.image || !String(c.image).trim()) errs.push(field.required(`${p}.image`, ''));
    else if (/\s/.test(c.image)) errs.push(field.invalid(`${p}.image`, c.image, 'must not have leading or trailing whitespace'));
    if (c.imagePullPolicy && !PULL_POLICIES.includes(c.imagePullPolicy)) errs.push(field.notSupported(`${p}.imagePullPolicy`, c.imagePullPolicy, PULL_POLICIES));
    errs.push(...validateResourceRequirements(c.resources, `${p}.resources`, claims));
    const portNames = new Set<string>();
    (c.ports ?? []).forEach((port, j) => {
      const pp = `${p}.ports[${j}]`;
      const n = port.containerPort;
      if (n === undefined || n === 0) errs.push(field.required(`${pp}.containerPort`, ''));
      else if (!Number.isInteger(n) || n < 1 || n > 65535) errs.push(field.invalid(`${pp}.containerPort`, n, 'must be between 1 and 65535, inclusive'));
      if (port.hostPort !== undefined && port.hostPort !== 0 && (port.hostPort < 1 || port.hostPort > 65535)) {
        errs.push(field.invalid(`${pp}.hostPort`, port.hostPort, 'must be between 1 and 65535, inclusive'));
      }
      if (port.protocol && !PROTOCOLS.includes(port.protocol)) errs.push(field.notSupported(`${pp}.protocol`, port.protocol, PROTOCOLS));
      if (port.name) {
        for (const m of isValidPortName(port.name)) errs.push(field.invalid(`${pp}.name`, port.name, m));
        if (portNames.has(port.name)) errs.push(field.duplicate(`${pp}.name`, port.name));
        portNames.add(port.name);
      }
    });
    (c.env ?? []).forEach((e, j) => {
      const ep = `${p}.env[${j}]`;
      if (!e.name) errs.push(field.required(`${ep}.name`, ''));
      else for (const m of isEnvVarName(e.name)) errs.push(field.invalid(`${ep}.name`, e.name, m));
    });
    const mountPaths = new Set<string>();
    (c.volumeMounts ?? []).forEach((m, j) => {
      const mp = `${p}.volumeMounts[${j}]`;
      if (!m.name) errs.push(field.required(`${mp}.name`, ''));
      else if (!volumes.has(m.name)) errs.push(field.notFound(`${mp}.name`, m.name));
      if (!m.mountPath) errs.push(field.required(`${mp}.mountPath`, ''));
      else {
        if (mountPaths.has(m.mountPath)) errs.push(field.invalid(`${mp}.mountPath`, m.mountPath, 'must be unique'));
        mountPaths.add(m.mountPath);
      }
    });
  });
  return errs;
}

/** ValidatePodSpec, for pods (`spec`) and templates (`spec.template.spec`). */
export function validatePodSpec(spec: PodSpec | undefined, path: string, extraVolumes: string[] = []): FieldError[] {
  const errs: FieldError[] = [];
  if (!spec) return [field.required(path, '')];
  // Volumes that exist without being listed in the spec (a StatefulSet's claim templates) may be
  // mounted; a listed volume of the same name is no duplicate (the claim replaces it in the pod).
  const volumes = new Set<string>(extraVolumes);
  const listed = new Set<string>();
  (spec.volumes ?? []).forEach((v, i) => {
    const p = `${path}.volumes[${i}]`;
    errs.push(...validateVolumeSource(v, p));
    if (!v.name) errs.push(field.required(`${p}.name`, ''));
    else {
      for (const m of isDNS1123Label(v.name)) errs.push(field.invalid(`${p}.name`, v.name, m));
      if (listed.has(v.name)) errs.push(field.duplicate(`${p}.name`, v.name));
      listed.add(v.name);
      volumes.add(v.name);
    }
  });
  const names = new Set<string>();
  const claims = new Set(((spec.resourceClaims ?? []) as { name?: string }[]).map((c) => c.name ?? ''));
  errs.push(...validateContainers(spec.initContainers, `${path}.initContainers`, volumes, false, names, claims));
  errs.push(...validateContainers(spec.containers, `${path}.containers`, volumes, true, names, claims));
  if (spec.restartPolicy && !RESTART_POLICIES.includes(spec.restartPolicy)) errs.push(field.notSupported(`${path}.restartPolicy`, spec.restartPolicy, RESTART_POLICIES));
  if (spec.dnsPolicy && !DNS_POLICIES.includes(spec.dnsPolicy)) errs.push(field.notSupported(`${path}.dnsPolicy`, spec.dnsPolicy, DNS_POLICIES));
  if (spec.terminationGracePeriodSeconds !== undefined && spec.terminationGracePeriodSeconds < 0) {
    errs.push(field.invalid(`${path}.terminationGracePeriodSeconds`, spec.terminationGracePeriodSeconds, 'must be greater than or equal to 0'));
  }
  if (spec.activeDeadlineSeconds !== undefined && spec.activeDeadlineSeconds <= 0) {
    errs.push(field.invalid(`${path}.activeDeadlineSeconds`, spec.activeDeadlineSeconds, 'must be between 1 and 2147483647, inclusive'));
  }
  if (spec.nodeName) for (const m of isDNS1123Subdomain(spec.nodeName)) errs.push(field.invalid(`${path}.nodeName`, spec.nodeName, m));
  const nodeSelector = spec.nodeSelector as Record<string, string> | undefined;
  if (nodeSelector) errs.push(...validateLabels(nodeSelector, `${path}.nodeSelector`));
  return errs;
}

/** The QoS class of a pod (pkg/apis/core/helper/qos). */
export function qosClass(spec: PodSpec | undefined): string {
  const containers = [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])];
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const res = (c.resources ?? {}) as { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
    const req = res.requests ?? {};
    const lim = res.limits ?? {};
    for (const r of ['cpu', 'memory']) {
      if (req[r] !== undefined || lim[r] !== undefined) any = true;
      if (lim[r] === undefined) guaranteed = false;
      else if (req[r] !== undefined && String(req[r]) !== String(lim[r])) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

const spec = (o: KubeObject) => (o.spec ?? {}) as PodSpec;

export const podStrategy: Strategy = {
  statusSubresource: true,
  returnDeletedObject: true,
  defaults(obj) {
    obj.spec ??= {};
    defaultPodSpec(spec(obj));
  },
  prepareForCreate(obj) {
    obj.status = { phase: 'Pending', qosClass: qosClass(spec(obj)) };
  },
  validate(obj) {
    return validatePodSpec(obj.spec as PodSpec | undefined, 'spec');
  },
  validateUpdate(obj, old) {
    // Only images, activeDeadlineSeconds, terminationGracePeriodSeconds and added tolerations may change.
    const a = structuredClone(spec(obj));
    const b = structuredClone(spec(old));
    for (const list of ['containers', 'initContainers'] as const) {
      (a[list] ?? []).forEach((c, i) => {
        const o = b[list]?.[i];
        if (o) c.image = o.image;
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
      return [
        field.forbidden(
          'spec',
          'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
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
  gracePeriod(obj, requested) {
    // An unscheduled or finished pod has nothing to stop: delete at once.
    const phase = (obj.status as { phase?: string } | undefined)?.phase;
    if (!spec(obj).nodeName || phase === 'Succeeded' || phase === 'Failed') return 0;
    const g = requested ?? spec(obj).terminationGracePeriodSeconds ?? 30;
    return g < 0 ? 1 : g;
  },
};
