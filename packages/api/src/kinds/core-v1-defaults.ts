/**
 * core/v1 defaulting of pod specs (pods and every pod template), as upstream's
 * pkg/apis/core/v1/defaults.go: the values kube-apiserver 1.33 fills in
 * before validation. Each function edits the decoded object in place.
 */
import { defaultVolume } from './core-v1-volumes.js';
import { type Obj, defaultTo, listOf, objOf, strOf, unset } from './json-fields.js';

/** `nginx` / `nginx:latest` → Always; any other tag or a digest → IfNotPresent. */
export function defaultPullPolicy(image: string | undefined): string {
  if (!image) return 'IfNotPresent';
  if (image.includes('@')) return 'IfNotPresent';
  const lastSlash = image.lastIndexOf('/');
  const colon = image.indexOf(':', lastSlash + 1);
  if (colon < 0) return 'Always';
  return image.slice(colon + 1) === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultHTTPGet(h: Obj | undefined): void {
  if (!h) return;
  defaultTo(h, 'path', '/');
  defaultTo(h, 'scheme', 'HTTP');
}

function defaultProbe(p: Obj | undefined): void {
  if (!p) return;
  defaultTo(p, 'timeoutSeconds', 1);
  defaultTo(p, 'periodSeconds', 10);
  defaultTo(p, 'successThreshold', 1);
  defaultTo(p, 'failureThreshold', 3);
  defaultHTTPGet(objOf(p.httpGet));
}

/** SetDefaults_Container and the defaults of what a container holds (ports, env, probes, hooks). */
export function defaultContainer(c: Obj): void {
  defaultTo(c, 'terminationMessagePath', '/dev/termination-log');
  defaultTo(c, 'terminationMessagePolicy', 'File');
  defaultTo(c, 'imagePullPolicy', defaultPullPolicy(strOf(c.image)));
  c.resources ??= {};
  for (const port of listOf(c.ports)) defaultTo(port, 'protocol', 'TCP');
  for (const e of listOf(c.env)) {
    const fieldRef = objOf(objOf(e.valueFrom)?.fieldRef);
    if (fieldRef) defaultTo(fieldRef, 'apiVersion', 'v1');
  }
  defaultProbe(objOf(c.livenessProbe));
  defaultProbe(objOf(c.readinessProbe));
  defaultProbe(objOf(c.startupProbe));
  const lifecycle = objOf(c.lifecycle);
  for (const hook of ['postStart', 'preStop']) defaultHTTPGet(objOf(objOf(lifecycle?.[hook])?.httpGet));
}

/**
 * SetDefaults_PodSpec and the defaults below it, for pods and every pod
 * template (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob,
 * PodTemplate): restart and DNS policies, grace period, scheduler, service
 * links, container defaults (regular, init and ephemeral), a volume without a
 * source becoming an emptyDir (SetDefaults_Volume), and volume file modes.
 */
export function defaultPodSpec(spec: Obj | undefined): void {
  if (!spec) return;
  defaultTo(spec, 'restartPolicy', 'Always');
  defaultTo(spec, 'dnsPolicy', 'ClusterFirst');
  if (spec.terminationGracePeriodSeconds === undefined || spec.terminationGracePeriodSeconds === null) spec.terminationGracePeriodSeconds = 30;
  spec.securityContext ??= {};
  defaultTo(spec, 'schedulerName', 'default-scheduler');
  spec.enableServiceLinks ??= true;
  for (const c of listOf(spec.containers)) defaultContainer(c);
  for (const c of listOf(spec.initContainers)) defaultContainer(c);
  for (const c of listOf(spec.ephemeralContainers)) defaultContainer(c);
  for (const v of listOf(spec.volumes)) {
    defaultVolume(v);
    for (const kind of ['configMap', 'secret', 'projected', 'downwardAPI']) {
      const src = objOf(v[kind]);
      if (src && (src.defaultMode === undefined || src.defaultMode === null)) src.defaultMode = 420;
    }
    const hostPath = objOf(v.hostPath);
    if (hostPath) hostPath.type ??= '';
  }
}

/**
 * The pod-only part of SetDefaults_Pod (templates do not get it): a container's
 * requests default to its limits, and with hostNetwork a port's hostPort
 * defaults to its containerPort.
 */
export function defaultPodOnlyFields(spec: Obj | undefined): void {
  if (!spec) return;
  for (const c of [...listOf(spec.containers), ...listOf(spec.initContainers)]) {
    const res = objOf(c.resources);
    const limits = objOf(res?.limits);
    if (!res || !limits) continue;
    const requests = (res.requests = objOf(res.requests) ?? {});
    for (const [k, v] of Object.entries(limits)) if (!(k in requests)) requests[k] = v;
  }
  if (spec.hostNetwork === true) {
    for (const c of [...listOf(spec.containers), ...listOf(spec.initContainers)]) {
      for (const port of listOf(c.ports)) if (unset(port.hostPort)) port.hostPort = port.containerPort;
    }
  }
}
