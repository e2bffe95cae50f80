/**
 * batch/v1 Jobs and CronJobs: defaults, the generated selector and template labels
 * of a Job (`batch.kubernetes.io/controller-uid`), restart policy Never or
 * OnFailure, the cron schedule syntax (kubernetes pkg/registry/batch).
 */
import type { KubeObject } from '@kubeling/api';
import { field, jsonEqual, type FieldError } from '@kubeling/apimachinery';
import type { Strategy } from '../strategy.js';
import { defaultPodSpec } from '../core/pods.js';
import { validateSelectorAndTemplate } from '@kubeling/api';

type Obj = Record<string, unknown>;
type JobSpec = Obj & {
  parallelism?: number;
  completions?: number;
  backoffLimit?: number;
  completionMode?: string;
  suspend?: boolean;
  manualSelector?: boolean;
  podReplacementPolicy?: string;
  selector?: { matchLabels?: Record<string, string> };
  template?: { metadata?: { labels?: Record<string, string> }; spec?: Obj };
};

const jobSpec = (o: KubeObject) => (o.spec ??= {}) as JobSpec;

export function defaultJobSpec(s: JobSpec): void {
  if (s.completions === undefined && s.parallelism === undefined) {
    s.completions = 1;
    s.parallelism = 1;
  }
  s.parallelism ??= 1;
  s.backoffLimit ??= 6;
  s.completionMode ??= 'NonIndexed';
  s.suspend ??= false;
  s.podReplacementPolicy ??= 'TerminatingOrFailed';
  if (s.manualSelector === undefined) delete s.manualSelector;
  if (s.template) {
    s.template.spec ??= {};
    defaultPodSpec(s.template.spec as never);
  }
}

function validateJobSpec(s: JobSpec, prefix = 'spec'): FieldError[] {
  const errs: FieldError[] = [];
  for (const k of ['parallelism', 'completions', 'backoffLimit'] as const) {
    const v = s[k];
    if (typeof v === 'number' && v < 0) errs.push(field.invalid(`${prefix}.${k}`, v, 'must be greater than or equal to 0'));
  }
  const rp = (s.template?.spec as { restartPolicy?: string } | undefined)?.restartPolicy;
  if (rp !== 'Never' && rp !== 'OnFailure') {
    errs.push(
      rp
        ? field.notSupported(`${prefix}.template.spec.restartPolicy`, rp, ['OnFailure', 'Never'])
        : field.required(`${prefix}.template.spec.restartPolicy`, ''),
    );
  }
  return errs;
}

export const jobStrategy: Strategy = {
  generation: true,
  statusSubresource: true,
  defaults(obj) {
    defaultJobSpec(jobSpec(obj));
  },
  prepareForCreate(obj) {
    obj.status = {};
    const s = jobSpec(obj);
    if (!s.manualSelector) {
      // The generated selector ties the Job to its own pods by uid.
      const uid = obj.metadata.uid!;
      const name = obj.metadata.name ?? '';
      s.selector = { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
      s.template ??= {};
      s.template.metadata ??= {};
      s.template.metadata.labels = {
        ...(s.template.metadata.labels ?? {}),
        'batch.kubernetes.io/controller-uid': uid,
        'batch.kubernetes.io/job-name': name,
        'controller-uid': uid,
        'job-name': name,
      };
    }
  },
  validate(obj) {
    const s = jobSpec(obj);
    return [
      ...validateJobSpec(s),
      ...validateSelectorAndTemplate(s as never, { restartPolicies: ['OnFailure', 'Never'] }).filter((e) => !e.field.endsWith('restartPolicy')),
    ];
  },
  validateUpdate(obj, old) {
    const a = jobSpec(obj);
    const b = (old.spec ?? {}) as JobSpec;
    const errs: FieldError[] = [];
    if (!jsonEqual(a.selector, b.selector)) errs.push(field.invalid('spec.selector', a.selector, 'field is immutable'));
    if (!jsonEqual(a.template, b.template) && !b.suspend) errs.push(field.invalid('spec.template', a.template, 'field is immutable'));
    if (a.completions !== b.completions) errs.push(field.invalid('spec.completions', a.completions, 'field is immutable'));
    return errs;
  },
  fields: (obj) => ({ 'status.successful': String(((obj.status ?? {}) as { succeeded?: number }).succeeded ?? 0) }),
};

const CRON_FIELD = /^(\*|\?|[0-9A-Za-z]+(-[0-9A-Za-z]+)?)(\/\d+)?(,(\*|[0-9A-Za-z]+(-[0-9A-Za-z]+)?)(\/\d+)?)*$/;
const CRON_MACROS = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];

export function cronScheduleError(schedule: string): string | undefined {
  const s = schedule.trim();
  if (CRON_MACROS.includes(s) || /^@every \d+[smh]/.test(s)) return undefined;
  const body = s.replace(/^(CRON_)?TZ=\S+\s+/, '');
  const parts = body.split(/\s+/);
  if (parts.length !== 5) return `expected exactly 5 fields, found ${parts.length}: [${body}]`;
  for (const p of parts) if (!CRON_FIELD.test(p)) return `failed to parse int from ${p}`;
  return undefined;
}

export const cronJobStrategy: Strategy = {
  generation: true,
  statusSubresource: true,
  defaults(obj) {
    const s = (obj.spec ??= {}) as Obj & { jobTemplate?: { spec?: JobSpec } };
    s.concurrencyPolicy ??= 'Allow';
    s.suspend ??= false;
    s.successfulJobsHistoryLimit ??= 3;
    s.failedJobsHistoryLimit ??= 1;
    if (s.jobTemplate?.spec) defaultJobSpec(s.jobTemplate.spec);
  },
  prepareForCreate(obj) {
    obj.status = {};
  },
  validate(obj) {
    const s = (obj.spec ?? {}) as { schedule?: string; concurrencyPolicy?: string; jobTemplate?: { spec?: JobSpec } };
    const errs: FieldError[] = [];
    if (!s.schedule) errs.push(field.required('spec.schedule', ''));
    else {
      const e = cronScheduleError(s.schedule);
      if (e) errs.push(field.invalid('spec.schedule', s.schedule, e));
    }
    const cp = s.concurrencyPolicy;
    if (cp && !['Allow', 'Forbid', 'Replace'].includes(cp)) errs.push(field.notSupported('spec.concurrencyPolicy', cp, ['Allow', 'Forbid', 'Replace']));
    if (!s.jobTemplate?.spec) errs.push(field.required('spec.jobTemplate.spec', ''));
    else errs.push(...validateJobSpec(s.jobTemplate.spec, 'spec.jobTemplate.spec'));
    return errs;
  },
};
