/**
 * batch/v1: Job and CronJob, as upstream Kubernetes 1.32 (`k8s.io/api/batch/v1`).
 */
import { Type } from '@sinclair/typebox';
import { boolean, described, enumString, int32, int64, list, object, string, time, type Static } from '../schema/dsl.js';
import { kindOf, LabelSelector, ObjectMeta } from '../schema/meta.js';
import { ObjectReference, PodTemplateSpec } from './core-v1.js';

const B = 'io.k8s.api.batch.v1.';

// ---------------------------------------------------------------- Job

export const PodFailurePolicyOnExitCodesRequirement = object(
  B + 'PodFailurePolicyOnExitCodesRequirement',
  'PodFailurePolicyOnExitCodesRequirement describes the requirement for handling a failed pod based on its container exit codes.',
  {
    containerName: string('Restricts the check for exit codes to the container with the specified name; when null, the rule applies to all containers.'),
    operator: enumString(['In', 'NotIn'], 'Represents the relationship between the container exit code(s) and the specified values: In or NotIn.'),
    values: list(int32(), 'Specifies the set of values each container exit code is checked against with respect to the operator.', { listType: 'set' }),
  },
  ['operator', 'values'],
);

export const PodFailurePolicyOnPodConditionsPattern = object(
  B + 'PodFailurePolicyOnPodConditionsPattern',
  'PodFailurePolicyOnPodConditionsPattern describes a pattern for matching an actual pod condition type.',
  {
    type: string('Specifies the required Pod condition type.'),
    status: string('Specifies the required Pod condition status. Defaults to True.'),
  },
  ['type'],
);

export const PodFailurePolicyRule = object(
  B + 'PodFailurePolicyRule',
  'PodFailurePolicyRule describes how a pod failure is handled when the requirements are met.',
  {
    action: enumString(['Count', 'FailIndex', 'FailJob', 'Ignore'], 'Specifies the action taken on a pod failure when the requirements are satisfied.'),
    onExitCodes: described(PodFailurePolicyOnExitCodesRequirement, 'Represents the requirement on the container exit codes.'),
    onPodConditions: list(PodFailurePolicyOnPodConditionsPattern, 'Represents the requirement on the pod conditions, as a list of pod condition patterns.', {
      listType: 'atomic',
    }),
  },
  ['action'],
);

export const PodFailurePolicy = object(
  B + 'PodFailurePolicy',
  'PodFailurePolicy describes how failed pods influence the backoffLimit.',
  {
    rules: list(PodFailurePolicyRule, 'A list of pod failure policy rules, evaluated in order.', { listType: 'atomic' }),
  },
  ['rules'],
);

export const SuccessPolicyRule = object(B + 'SuccessPolicyRule', 'SuccessPolicyRule describes rule for declaring a Job as succeeded.', {
  succeededIndexes: string('succeededIndexes specifies the set of indexes which need to be contained in the actual set of the succeeded indexes for the Job.'),
  succeededCount: int32('succeededCount specifies the minimal required size of the actual set of the succeeded indexes for the Job.'),
});

export const SuccessPolicy = object(
  B + 'SuccessPolicy',
  'SuccessPolicy describes when a Job can be declared as succeeded based on the success of some indexes.',
  {
    rules: list(
      SuccessPolicyRule,
      'rules represents the list of alternative rules for declaring the Jobs as successful before `.status.succeeded >= .spec.completions`.',
      {
        listType: 'atomic',
      },
    ),
  },
  ['rules'],
);

export const JobSpec = object(
  B + 'JobSpec',
  'JobSpec describes how the job execution will look like.',
  {
    parallelism: int32('Specifies the maximum desired number of pods the job should run at any given time.'),
    completions: int32('Specifies the desired number of successfully finished pods the job should be run with.'),
    activeDeadlineSeconds: int64(
      'Specifies the duration in seconds relative to the startTime that the job may be continuously active before the system tries to terminate it.',
    ),
    podFailurePolicy: described(PodFailurePolicy, 'Specifies the policy of handling failed pods.'),
    successPolicy: described(SuccessPolicy, 'successPolicy specifies the policy when the Job can be declared as succeeded.'),
    backoffLimit: int32('Specifies the number of retries before marking this job failed. Defaults to 6.'),
    backoffLimitPerIndex: int32('Specifies the limit for the number of retries within an index before marking this index as failed.'),
    maxFailedIndexes: int32('Specifies the maximal number of failed indexes before marking the Job as failed, when backoffLimitPerIndex is set.'),
    selector: described(LabelSelector, 'A label query over pods that should match the pod count.'),
    manualSelector: boolean('manualSelector controls generation of pod labels and pod selectors.'),
    template: described(PodTemplateSpec, 'Describes the pod that will be created when executing a job.'),
    ttlSecondsAfterFinished: int32('ttlSecondsAfterFinished limits the lifetime of a Job that has finished execution (either Complete or Failed).'),
    completionMode: enumString(
      ['Indexed', 'NonIndexed'],
      'completionMode specifies how Pod completions are tracked. It can be `NonIndexed` (default) or `Indexed`.',
    ),
    suspend: boolean('suspend specifies whether the Job controller should create Pods or not. Defaults to false.'),
    podReplacementPolicy: enumString(['Failed', 'TerminatingOrFailed'], 'podReplacementPolicy specifies when to create replacement Pods.'),
    managedBy: string('ManagedBy field indicates the controller that manages a Job. Immutable.'),
  },
  ['template'],
);

export const JobCondition = object(
  B + 'JobCondition',
  'JobCondition describes current state of a job.',
  {
    type: string('Type of job condition, Complete or Failed.'),
    status: string('Status of the condition, one of True, False, Unknown.'),
    lastProbeTime: time('Last time the condition was checked.'),
    lastTransitionTime: time('Last time the condition transit from one status to another.'),
    reason: string("(brief) reason for the condition's last transition."),
    message: string('Human readable message indicating details about last transition.'),
  },
  ['type', 'status'],
);

export const UncountedTerminatedPods = object(
  B + 'UncountedTerminatedPods',
  "UncountedTerminatedPods holds UIDs of Pods that have terminated but haven't been accounted in Job status counters.",
  {
    succeeded: list(Type.String(), 'succeeded holds UIDs of succeeded Pods.', { listType: 'set' }),
    failed: list(Type.String(), 'failed holds UIDs of failed Pods.', { listType: 'set' }),
  },
);

export const JobStatus = object(B + 'JobStatus', 'JobStatus represents the current state of a Job.', {
  conditions: list(JobCondition, "The latest available observations of an object's current state.", {
    mergeKey: 'type',
    strategy: 'merge',
    listType: 'atomic',
  }),
  startTime: time('Represents time when the job controller started processing a job.'),
  completionTime: time('Represents time when the job was completed.'),
  active: int32('The number of pending and running pods which are not terminating (without a deletionTimestamp).'),
  succeeded: int32('The number of pods which reached phase Succeeded.'),
  failed: int32('The number of pods which reached phase Failed.'),
  terminating: int32('The number of pods which are terminating (in phase Pending or Running and have a deletionTimestamp).'),
  completedIndexes: string('completedIndexes holds the completed indexes when .spec.completionMode = "Indexed" in a text format.'),
  failedIndexes: string('FailedIndexes holds the failed indexes when spec.backoffLimitPerIndex is set.'),
  uncountedTerminatedPods: described(
    UncountedTerminatedPods,
    "uncountedTerminatedPods holds the UIDs of Pods that have terminated but the job controller hasn't yet accounted for in the status counters.",
  ),
  ready: int32('The number of active pods which have a Ready condition and are not terminating (without a deletionTimestamp).'),
});

export const Job = kindOf(B + 'Job', 'Job represents the configuration of a single job.', {
  spec: described(JobSpec, 'Specification of the desired behavior of a job.'),
  status: described(JobStatus, 'Current status of a job.'),
});

// ---------------------------------------------------------------- CronJob

export const JobTemplateSpec = object(B + 'JobTemplateSpec', 'JobTemplateSpec describes the data a Job should have when created from a template.', {
  metadata: described(ObjectMeta, "Standard object's metadata of the jobs created from this template."),
  spec: described(JobSpec, 'Specification of the desired behavior of the job.'),
});

export const CronJobSpec = object(
  B + 'CronJobSpec',
  'CronJobSpec describes how the job execution will look like and when it will actually run.',
  {
    schedule: string('The schedule in Cron format.'),
    timeZone: string('The time zone name for the given schedule; defaults to the time zone of the kube-controller-manager process.'),
    startingDeadlineSeconds: int64('Optional deadline in seconds for starting the job if it misses scheduled time for any reason.'),
    concurrencyPolicy: enumString(['Allow', 'Forbid', 'Replace'], 'Specifies how to treat concurrent executions of a Job: Allow (default), Forbid or Replace.'),
    suspend: boolean('This flag tells the controller to suspend subsequent executions. Defaults to false.'),
    jobTemplate: described(JobTemplateSpec, 'Specifies the job that will be created when executing a CronJob.'),
    successfulJobsHistoryLimit: int32('The number of successful finished jobs to retain. Defaults to 3.'),
    failedJobsHistoryLimit: int32('The number of failed finished jobs to retain. Defaults to 1.'),
  },
  ['schedule', 'jobTemplate'],
);

export const CronJobStatus = object(B + 'CronJobStatus', 'CronJobStatus represents the current state of a cron job.', {
  active: list(ObjectReference, 'A list of pointers to currently running jobs.', { listType: 'atomic' }),
  lastScheduleTime: time('Information when was the last time the job was successfully scheduled.'),
  lastSuccessfulTime: time('Information when was the last time the job successfully completed.'),
});

export const CronJob = kindOf(B + 'CronJob', 'CronJob represents the configuration of a single cron job.', {
  spec: described(CronJobSpec, 'Specification of the desired behavior of a cron job, including the schedule.'),
  status: described(CronJobStatus, 'Current status of a cron job.'),
});

export type PodFailurePolicyOnExitCodesRequirement = Static<typeof PodFailurePolicyOnExitCodesRequirement>;
export type PodFailurePolicyOnPodConditionsPattern = Static<typeof PodFailurePolicyOnPodConditionsPattern>;
export type PodFailurePolicyRule = Static<typeof PodFailurePolicyRule>;
export type PodFailurePolicy = Static<typeof PodFailurePolicy>;
export type SuccessPolicyRule = Static<typeof SuccessPolicyRule>;
export type SuccessPolicy = Static<typeof SuccessPolicy>;
export type JobSpec = Static<typeof JobSpec>;
export type JobCondition = Static<typeof JobCondition>;
export type UncountedTerminatedPods = Static<typeof UncountedTerminatedPods>;
export type JobStatus = Static<typeof JobStatus>;
export type Job = Static<typeof Job>;
export type JobTemplateSpec = Static<typeof JobTemplateSpec>;
export type CronJobSpec = Static<typeof CronJobSpec>;
export type CronJobStatus = Static<typeof CronJobStatus>;
export type CronJob = Static<typeof CronJob>;
