/**
 * Table printers of the workload kinds, apps/v1 and batch/v1, with the columns
 * of kubernetes pkg/printers/internalversion/printers.go (printDeployment,
 * printReplicaSet, printReplicationController, printDaemonSet, printStatefulSet, printJob, printCronJob).
 */
import type { appsv1, batchv1, corev1 } from '@kubeling/api';
import { humanDuration } from '@kubeling/apimachinery';
import { AGE, NAME, age, col, containersOf, images, mapSelector, names, printer, selectorString, wide, type Printer } from './columns.js';

function jobDuration(j: batchv1.Job, now: number): string {
  const start = j.status?.startTime;
  if (!start) return '';
  const end = j.status?.completionTime ? Date.parse(j.status.completionTime) : now;
  return humanDuration(end - Date.parse(start));
}

function jobStatus(j: batchv1.Job): string {
  const conds = j.status?.conditions ?? [];
  const has = (t: string) => conds.some((c) => c.type === t && c.status === 'True');
  if (has('Complete')) return 'Complete';
  if (has('Failed')) return 'Failed';
  if (j.metadata?.deletionTimestamp) return 'Terminating';
  if (has('SuccessCriteriaMet')) return 'SuccessCriteriaMet';
  if (has('FailureTarget')) return 'FailureTarget';
  if (j.spec?.suspend) return 'Suspended';
  return 'Running';
}

export const workloadPrinters: Record<string, Printer> = {
  '/replicationcontrollers': printer<corev1.ReplicationController>(
    [
      NAME,
      col('Desired', 'Replicas is the number of desired replicas.', { type: 'integer' }),
      col('Current', 'Replicas is the most recently observed number of replicas.', { type: 'integer' }),
      col('Ready', 'The number of ready replicas for this replication controller.', { type: 'integer' }),
      AGE,
      wide('Containers', 'Names of each container in the template.'),
      wide('Images', 'Images referenced by each container in the template.'),
      wide('Selector', 'Selector is a label query over pods that should match the replica count.'),
    ],
    (r, now) => {
      const cs = containersOf(r.spec?.template?.spec);
      return [
        r.metadata?.name,
        r.spec?.replicas ?? 0,
        r.status?.replicas ?? 0,
        r.status?.readyReplicas ?? 0,
        age(r, now),
        names(cs),
        images(cs),
        mapSelector(r.spec?.selector),
      ];
    },
  ),
  'apps/deployments': printer<appsv1.Deployment>(
    [
      NAME,
      col('Ready', 'Number of the pod with ready state'),
      col('Up-to-date', 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.', { type: 'integer' }),
      col('Available', 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.', { type: 'integer' }),
      AGE,
      wide('Containers', 'Names of each container in the template.'),
      wide('Images', 'Images referenced by each container in the template.'),
      wide('Selector', 'Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.'),
    ],
    (d, now) => {
      const cs = containersOf(d.spec?.template?.spec);
      return [
        d.metadata?.name,
        `${d.status?.readyReplicas ?? 0}/${d.spec?.replicas ?? 0}`,
        d.status?.updatedReplicas ?? 0,
        d.status?.availableReplicas ?? 0,
        age(d, now),
        names(cs),
        images(cs),
        selectorString(d.spec?.selector),
      ];
    },
  ),
  'apps/replicasets': printer<appsv1.ReplicaSet>(
    [
      NAME,
      col('Desired', 'Replicas is the number of desired replicas.', { type: 'integer' }),
      col('Current', 'Replicas is the most recently observed number of replicas.', { type: 'integer' }),
      col('Ready', 'The number of ready replicas for this replica set.', { type: 'integer' }),
      AGE,
      wide('Containers', 'Names of each container in the template.'),
      wide('Images', 'Images referenced by each container in the template.'),
      wide('Selector', 'Selector is a label query over pods that should match the replica count.'),
    ],
    (r, now) => {
      const cs = containersOf(r.spec?.template?.spec);
      return [
        r.metadata?.name,
        r.spec?.replicas ?? 0,
        r.status?.replicas ?? 0,
        r.status?.readyReplicas ?? 0,
        age(r, now),
        names(cs),
        images(cs),
        selectorString(r.spec?.selector),
      ];
    },
  ),
  'apps/daemonsets': printer<appsv1.DaemonSet>(
    [
      NAME,
      col('Desired', 'The total number of nodes that should be running the daemon pod.', { type: 'integer' }),
      col('Current', 'The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.', { type: 'integer' }),
      col('Ready', 'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.', { type: 'integer' }),
      col('Up-to-date', 'The total number of nodes that are running updated daemon pod', { type: 'integer' }),
      col('Available', 'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available.', {
        type: 'integer',
      }),
      col('Node Selector', 'NodeSelector is a selector which must be true for the pod to fit on a node.'),
      AGE,
      wide('Containers', 'Names of each container in the template.'),
      wide('Images', 'Images referenced by each container in the template.'),
      wide('Selector', 'A label query over pods that are managed by the daemon set.'),
    ],
    (d, now) => {
      const cs = containersOf(d.spec?.template?.spec);
      const st = d.status;
      return [
        d.metadata?.name,
        st?.desiredNumberScheduled ?? 0,
        st?.currentNumberScheduled ?? 0,
        st?.numberReady ?? 0,
        st?.updatedNumberScheduled ?? 0,
        st?.numberAvailable ?? 0,
        mapSelector(d.spec?.template?.spec?.nodeSelector),
        age(d, now),
        names(cs),
        images(cs),
        selectorString(d.spec?.selector),
      ];
    },
  ),
  'apps/statefulsets': printer<appsv1.StatefulSet>(
    [
      NAME,
      col('Ready', 'Number of the pod with ready state'),
      AGE,
      wide('Containers', 'Names of each container in the template.'),
      wide('Images', 'Images referenced by each container in the template.'),
    ],
    (s, now) => {
      const cs = containersOf(s.spec?.template?.spec);
      return [s.metadata?.name, `${s.status?.readyReplicas ?? 0}/${s.spec?.replicas ?? 0}`, age(s, now), names(cs), images(cs)];
    },
  ),
  'batch/jobs': printer<batchv1.Job>(
    [
      NAME,
      col('Status', 'Status of the job.'),
      col('Completions', 'The desired number of successfully finished pods the job should be run with.'),
      col('Duration', 'Time required to complete the job.'),
      AGE,
      wide('Containers', 'Names of each container in the template.'),
      wide('Images', 'Images referenced by each container in the template.'),
      wide('Selector', 'A label query over pods that should match the pod count.'),
    ],
    (j, now) => {
      const cs = containersOf(j.spec?.template?.spec);
      const completions =
        j.spec?.completions !== undefined
          ? `${j.status?.succeeded ?? 0}/${j.spec.completions}`
          : `${j.status?.succeeded ?? 0}/1 of ${j.spec?.parallelism ?? 1}`;
      return [j.metadata?.name, jobStatus(j), completions, jobDuration(j, now), age(j, now), names(cs), images(cs), selectorString(j.spec?.selector)];
    },
  ),
  'batch/cronjobs': printer<batchv1.CronJob>(
    [
      NAME,
      col('Schedule', 'The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.'),
      col('Timezone', 'The time zone name for the given schedule.'),
      col('Suspend', 'This flag tells the controller to suspend subsequent executions.', { type: 'boolean' }),
      col('Active', 'A list of pointers to currently running jobs.', { type: 'integer' }),
      col('Last Schedule', 'Information when was the last time the job was successfully scheduled.'),
      AGE,
      wide('Containers', 'Names of each container in the template.'),
      wide('Images', 'Images referenced by each container in the template.'),
      wide('Selector', 'A label query over pods that should match the pod count.'),
    ],
    (c, now) => {
      const cs = containersOf(c.spec?.jobTemplate?.spec?.template?.spec);
      const last = c.status?.lastScheduleTime ? humanDuration(now - Date.parse(c.status.lastScheduleTime)) : '<none>';
      return [
        c.metadata?.name,
        c.spec?.schedule ?? '',
        c.spec?.timeZone ?? '<none>',
        c.spec?.suspend ?? false,
        (c.status?.active ?? []).length,
        last,
        age(c, now),
        names(cs),
        images(cs),
        selectorString(c.spec?.jobTemplate?.spec?.selector),
      ];
    },
  ),
};
