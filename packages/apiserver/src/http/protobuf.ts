/**
 * Decoding of the protobuf request bodies kubectl ≥ 1.32 sends for
 * `kubectl create <generator>` and `kubectl auth can-i`: the `k8s\0` envelope
 * (`runtime.Unknown`) and the messages of the kinds those commands send, turned
 * into the JSON the rest of the server handles.
 *
 * A generic wire-format reader plus a field map per message (field numbers from
 * the upstream generated.proto). Go encodes every non-pointer field, so empty
 * strings, zeros and empty messages are dropped unless the field is a pointer
 * (`keep`), where zero is a real value (`replicas: 0`).
 */
import { badRequest } from '@kubeling/apimachinery';

type FieldType = 'string' | 'int' | 'bool' | 'bytes' | { msg: string } | { map: 'string' | 'bytes' | { msg: string } };

interface FieldDef {
  name: string;
  type: FieldType;
  repeated?: boolean;
  /** A pointer field in Go: present means set, even when zero. */
  keep?: boolean;
}

type MessageDef = Record<number, FieldDef>;

const f = (name: string, type: FieldType, opts: Partial<FieldDef> = {}): FieldDef => ({ name, type, ...opts });
const msg = (m: string) => ({ msg: m });
const S = 'string' as const;
const I = 'int' as const;
const B = 'bool' as const;

const MESSAGES: Record<string, MessageDef> = {
  Unknown: { 1: f('typeMeta', msg('TypeMeta')), 2: f('raw', 'bytes'), 3: f('contentEncoding', S), 4: f('contentType', S) },
  TypeMeta: { 1: f('apiVersion', S), 2: f('kind', S) },
  Time: { 1: f('seconds', I), 2: f('nanos', I) },
  ObjectMeta: {
    1: f('name', S),
    2: f('generateName', S),
    3: f('namespace', S),
    5: f('uid', S),
    6: f('resourceVersion', S),
    7: f('generation', I),
    8: f('creationTimestamp', msg('Time')),
    11: f('labels', { map: S }),
    12: f('annotations', { map: S }),
    13: f('ownerReferences', msg('OwnerReference'), { repeated: true }),
    14: f('finalizers', S, { repeated: true }),
  },
  OwnerReference: {
    1: f('kind', S),
    3: f('name', S),
    4: f('uid', S),
    5: f('apiVersion', S),
    6: f('controller', B, { keep: true }),
    7: f('blockOwnerDeletion', B, { keep: true }),
  },
  LabelSelector: { 1: f('matchLabels', { map: S }), 2: f('matchExpressions', msg('LabelSelectorRequirement'), { repeated: true }) },
  LabelSelectorRequirement: { 1: f('key', S), 2: f('operator', S), 3: f('values', S, { repeated: true }) },
  IntOrString: { 1: f('type', I), 2: f('intVal', I), 3: f('strVal', S) },
  Quantity: { 1: f('string', S) },
  LocalObjectReference: { 1: f('name', S) },

  Deployment: { 1: f('metadata', msg('ObjectMeta')), 2: f('spec', msg('DeploymentSpec')) },
  DeploymentSpec: {
    1: f('replicas', I, { keep: true }),
    2: f('selector', msg('LabelSelector')),
    3: f('template', msg('PodTemplateSpec')),
    4: f('strategy', msg('DeploymentStrategy')),
    5: f('minReadySeconds', I),
    6: f('revisionHistoryLimit', I, { keep: true }),
    7: f('paused', B),
    9: f('progressDeadlineSeconds', I, { keep: true }),
  },
  DeploymentStrategy: { 1: f('type', S), 2: f('rollingUpdate', msg('RollingUpdateDeployment')) },
  RollingUpdateDeployment: { 1: f('maxUnavailable', msg('IntOrString')), 2: f('maxSurge', msg('IntOrString')) },
  PodTemplateSpec: { 1: f('metadata', msg('ObjectMeta')), 2: f('spec', msg('PodSpec')) },
  PodSpec: {
    2: f('containers', msg('Container'), { repeated: true }),
    3: f('restartPolicy', S),
    4: f('terminationGracePeriodSeconds', I, { keep: true }),
    5: f('activeDeadlineSeconds', I, { keep: true }),
    6: f('dnsPolicy', S),
    7: f('nodeSelector', { map: S }),
    8: f('serviceAccountName', S),
    10: f('nodeName', S),
    11: f('hostNetwork', B),
    15: f('imagePullSecrets', msg('LocalObjectReference'), { repeated: true }),
    16: f('hostname', S),
    17: f('subdomain', S),
    19: f('schedulerName', S),
    20: f('initContainers', msg('Container'), { repeated: true }),
    24: f('priorityClassName', S),
  },
  Container: {
    1: f('name', S),
    2: f('image', S),
    3: f('command', S, { repeated: true }),
    4: f('args', S, { repeated: true }),
    5: f('workingDir', S),
    6: f('ports', msg('ContainerPort'), { repeated: true }),
    7: f('env', msg('EnvVar'), { repeated: true }),
    8: f('resources', msg('ResourceRequirements')),
    13: f('terminationMessagePath', S),
    14: f('imagePullPolicy', S),
    16: f('stdin', B),
    17: f('stdinOnce', B),
    18: f('tty', B),
    20: f('terminationMessagePolicy', S),
  },
  ContainerPort: { 1: f('name', S), 2: f('hostPort', I), 3: f('containerPort', I), 4: f('protocol', S), 5: f('hostIP', S) },
  EnvVar: { 1: f('name', S), 2: f('value', S) },
  ResourceRequirements: { 1: f('limits', { map: msg('Quantity') }), 2: f('requests', { map: msg('Quantity') }) },

  Service: { 1: f('metadata', msg('ObjectMeta')), 2: f('spec', msg('ServiceSpec')) },
  ServiceSpec: {
    1: f('ports', msg('ServicePort'), { repeated: true }),
    2: f('selector', { map: S }),
    3: f('clusterIP', S),
    4: f('type', S),
    5: f('externalIPs', S, { repeated: true }),
    7: f('sessionAffinity', S),
    8: f('loadBalancerIP', S),
    10: f('externalName', S),
    11: f('externalTrafficPolicy', S),
    13: f('publishNotReadyAddresses', B),
    18: f('clusterIPs', S, { repeated: true }),
  },
  ServicePort: { 1: f('name', S), 2: f('protocol', S), 3: f('port', I), 4: f('targetPort', msg('IntOrString')), 5: f('nodePort', I) },

  ConfigMap: { 1: f('metadata', msg('ObjectMeta')), 2: f('data', { map: S }), 3: f('binaryData', { map: 'bytes' }), 4: f('immutable', B, { keep: true }) },
  Secret: {
    1: f('metadata', msg('ObjectMeta')),
    2: f('data', { map: 'bytes' }),
    3: f('type', S),
    4: f('stringData', { map: S }),
    5: f('immutable', B, { keep: true }),
  },
  Namespace: { 1: f('metadata', msg('ObjectMeta')), 2: f('spec', msg('NamespaceSpec')) },
  NamespaceSpec: { 1: f('finalizers', S, { repeated: true }) },
  ServiceAccount: { 1: f('metadata', msg('ObjectMeta')), 4: f('automountServiceAccountToken', B, { keep: true }) },

  Job: { 1: f('metadata', msg('ObjectMeta')), 2: f('spec', msg('JobSpec')) },
  JobSpec: {
    1: f('parallelism', I, { keep: true }),
    2: f('completions', I, { keep: true }),
    3: f('activeDeadlineSeconds', I, { keep: true }),
    4: f('selector', msg('LabelSelector')),
    5: f('manualSelector', B, { keep: true }),
    6: f('template', msg('PodTemplateSpec')),
    7: f('backoffLimit', I, { keep: true }),
    8: f('ttlSecondsAfterFinished', I, { keep: true }),
    9: f('completionMode', S),
    10: f('suspend', B, { keep: true }),
  },
  CronJob: { 1: f('metadata', msg('ObjectMeta')), 2: f('spec', msg('CronJobSpec')) },
  CronJobSpec: {
    1: f('schedule', S),
    2: f('startingDeadlineSeconds', I, { keep: true }),
    3: f('concurrencyPolicy', S),
    4: f('suspend', B, { keep: true }),
    5: f('jobTemplate', msg('JobTemplateSpec')),
    6: f('successfulJobsHistoryLimit', I, { keep: true }),
    7: f('failedJobsHistoryLimit', I, { keep: true }),
    8: f('timeZone', S),
  },
  JobTemplateSpec: { 1: f('metadata', msg('ObjectMeta')), 2: f('spec', msg('JobSpec')) },

  PriorityClass: {
    1: f('metadata', msg('ObjectMeta')),
    2: f('value', I, { keep: true }),
    3: f('globalDefault', B),
    4: f('description', S),
    5: f('preemptionPolicy', S),
  },
  PodDisruptionBudget: { 1: f('metadata', msg('ObjectMeta')), 2: f('spec', msg('PodDisruptionBudgetSpec')) },
  PodDisruptionBudgetSpec: {
    1: f('minAvailable', msg('IntOrString')),
    2: f('selector', msg('LabelSelector')),
    3: f('maxUnavailable', msg('IntOrString')),
    4: f('unhealthyPodEvictionPolicy', S),
  },
  ResourceQuota: { 1: f('metadata', msg('ObjectMeta')), 2: f('spec', msg('ResourceQuotaSpec')) },
  ResourceQuotaSpec: { 1: f('hard', { map: msg('Quantity') }), 2: f('scopes', S, { repeated: true }) },

  Role: { 1: f('metadata', msg('ObjectMeta')), 2: f('rules', msg('PolicyRule'), { repeated: true }) },
  ClusterRole: { 1: f('metadata', msg('ObjectMeta')), 2: f('rules', msg('PolicyRule'), { repeated: true }), 3: f('aggregationRule', msg('AggregationRule')) },
  AggregationRule: { 1: f('clusterRoleSelectors', msg('LabelSelector'), { repeated: true }) },
  PolicyRule: {
    1: f('verbs', S, { repeated: true }),
    2: f('apiGroups', S, { repeated: true }),
    3: f('resources', S, { repeated: true }),
    4: f('resourceNames', S, { repeated: true }),
    5: f('nonResourceURLs', S, { repeated: true }),
  },
  RoleBinding: { 1: f('metadata', msg('ObjectMeta')), 2: f('subjects', msg('Subject'), { repeated: true }), 3: f('roleRef', msg('RoleRef')) },
  ClusterRoleBinding: { 1: f('metadata', msg('ObjectMeta')), 2: f('subjects', msg('Subject'), { repeated: true }), 3: f('roleRef', msg('RoleRef')) },
  Subject: { 1: f('kind', S), 2: f('apiGroup', S), 3: f('name', S), 4: f('namespace', S) },
  RoleRef: { 1: f('apiGroup', S), 2: f('kind', S), 3: f('name', S) },

  SelfSubjectAccessReview: { 1: f('metadata', msg('ObjectMeta')), 2: f('spec', msg('SelfSubjectAccessReviewSpec')) },
  SelfSubjectAccessReviewSpec: { 1: f('resourceAttributes', msg('ResourceAttributes')), 2: f('nonResourceAttributes', msg('NonResourceAttributes')) },
  ResourceAttributes: {
    1: f('namespace', S),
    2: f('verb', S),
    3: f('group', S),
    4: f('version', S),
    5: f('resource', S),
    6: f('subresource', S),
    7: f('name', S),
  },
  NonResourceAttributes: { 1: f('path', S), 2: f('verb', S) },
  SelfSubjectRulesReview: { 1: f('metadata', msg('ObjectMeta')), 2: f('spec', msg('SelfSubjectRulesReviewSpec')) },
  SelfSubjectRulesReviewSpec: { 1: f('namespace', S) },
  SubjectAccessReview: { 1: f('metadata', msg('ObjectMeta')), 2: f('spec', msg('SubjectAccessReviewSpec')) },
  SubjectAccessReviewSpec: {
    1: f('resourceAttributes', msg('ResourceAttributes')),
    2: f('nonResourceAttributes', msg('NonResourceAttributes')),
    3: f('user', S),
    4: f('groups', S, { repeated: true }),
    6: f('uid', S),
  },
  SelfSubjectReview: { 1: f('metadata', msg('ObjectMeta')) },
  TokenReview: { 1: f('metadata', msg('ObjectMeta')), 2: f('spec', msg('TokenReviewSpec')) },
  TokenReviewSpec: { 1: f('token', S), 2: f('audiences', S, { repeated: true }) },
  TokenRequest: { 1: f('metadata', msg('ObjectMeta')), 2: f('spec', msg('TokenRequestSpec')) },
  TokenRequestSpec: {
    1: f('audiences', S, { repeated: true }),
    3: f('boundObjectRef', msg('BoundObjectReference')),
    4: f('expirationSeconds', I, { keep: true }),
  },
  BoundObjectReference: { 1: f('kind', S), 2: f('apiVersion', S), 3: f('name', S), 4: f('uid', S) },
};

/** Kinds whose bodies can be decoded (by `kind` of the envelope). */
export const PROTOBUF_KINDS = Object.keys(MESSAGES).filter((k) => MESSAGES[k]![1]?.name === 'metadata');

class Reader {
  pos = 0;
  constructor(private readonly buf: Buffer) {}
  get done(): boolean {
    return this.pos >= this.buf.length;
  }
  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error('truncated varint');
      const b = this.buf[this.pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
      if (shift > 70n) throw new Error('varint too long');
    }
  }
  bytes(): Buffer {
    const len = Number(this.varint());
    if (len < 0 || this.pos + len > this.buf.length) throw new Error('truncated length-delimited field');
    const out = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return out;
  }
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.pos += 4;
    else throw new Error(`unsupported wire type ${wire}`);
    if (this.pos > this.buf.length) throw new Error('truncated field');
  }
}

const toSigned = (v: bigint) => Number(BigInt.asIntN(64, v));

function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null || v === '' || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.keys(v as object).length === 0;
  return false;
}

function decodeMessage(name: string, buf: Buffer): Record<string, unknown> {
  const def = MESSAGES[name];
  if (!def) throw new Error(`unknown message ${name}`);
  const out: Record<string, unknown> = {};
  const r = new Reader(buf);
  while (!r.done) {
    const tag = r.varint();
    const fieldNo = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    const fd = def[fieldNo];
    if (!fd) {
      r.skip(wire);
      continue;
    }
    let value: unknown;
    const t = fd.type;
    if (t === 'string') value = r.bytes().toString('utf8');
    else if (t === 'bytes') value = Buffer.from(r.bytes()).toString('base64');
    else if (t === 'int') value = toSigned(r.varint());
    else if (t === 'bool') value = r.varint() !== 0n;
    else if ('msg' in t) value = convertSpecial(t.msg, decodeMessage(t.msg, r.bytes()));
    else {
      const entry = new Reader(r.bytes());
      let k = '';
      let v: unknown = '';
      while (!entry.done) {
        const et = entry.varint();
        const n = Number(et >> 3n);
        if (n === 1) k = entry.bytes().toString('utf8');
        else if (n === 2) {
          const vt = t.map;
          const raw = entry.bytes();
          v =
            vt === 'string' ? raw.toString('utf8') : vt === 'bytes' ? Buffer.from(raw).toString('base64') : convertSpecial(vt.msg, decodeMessage(vt.msg, raw));
        } else entry.skip(Number(et & 7n));
      }
      const m = (out[fd.name] ??= {}) as Record<string, unknown>;
      m[k] = v;
      continue;
    }
    if (fd.repeated) ((out[fd.name] ??= []) as unknown[]).push(value);
    else if (fd.keep) out[fd.name] = value;
    else if (!isEmpty(value)) out[fd.name] = value;
  }
  for (const [k, v] of Object.entries(out)) if (isEmpty(v) && !Object.values(def).find((d) => d.name === k)?.keep) delete out[k];
  return out;
}

/** Messages whose JSON form is not an object: Time, Quantity, IntOrString. */
function convertSpecial(name: string, m: Record<string, unknown>): unknown {
  if (name === 'Time') {
    const s = Number(m.seconds ?? 0);
    return s === 0 ? undefined : new Date(s * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  if (name === 'Quantity') return m.string ?? '0';
  if (name === 'IntOrString') return Number(m.type ?? 0) === 1 ? (m.strVal ?? '') : Number(m.intVal ?? 0);
  return m;
}

export const PROTOBUF_MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** Decodes a `k8s\0`-prefixed body into the JSON object it carries. 400 on anything malformed or unknown. */
export function decodeProtobufBody(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || !body.subarray(0, 4).equals(PROTOBUF_MAGIC))
    throw badRequest('provided protobuf data is not a Kubernetes object: missing magic prefix');
  let env: Record<string, unknown>;
  try {
    env = decodeMessage('Unknown', body.subarray(4));
  } catch (e) {
    throw badRequest(`unable to decode protobuf body: ${(e as Error).message}`);
  }
  const tm = (env.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  const kind = tm.kind ?? '';
  if (!PROTOBUF_KINDS.includes(kind)) {
    throw badRequest(`no kind "${kind}" is registered for the protobuf encoding of version "${tm.apiVersion ?? ''}"`);
  }
  let obj: Record<string, unknown>;
  try {
    obj = decodeMessage(kind, Buffer.from(String(env.raw ?? ''), 'base64'));
  } catch (e) {
    throw badRequest(`unable to decode ${kind} from protobuf: ${(e as Error).message}`);
  }
  obj.metadata ??= {};
  return { apiVersion: tm.apiVersion, kind, ...obj };
}
