/**
 * Table printers of flowcontrol.apiserver.k8s.io: FlowSchemas and
 * PriorityLevelConfigurations, with the columns of kubernetes
 * pkg/printers/internalversion/printers.go (printFlowSchema,
 * printPriorityLevelConfiguration). MissingPL is the status of the `Dangling`
 * condition ("?" until the apiserver has set it); a level without queuing shows
 * `<none>` for its queuing columns.
 */
import type { flowcontrolv1 } from '@kubeling/api';
import { AGE, NAME, age, col, printer, type Printer } from './columns.js';

export const flowcontrolPrinters: Record<string, Printer> = {
  'flowcontrol.apiserver.k8s.io/flowschemas': printer<flowcontrolv1.FlowSchema>(
    [
      NAME,
      col('PriorityLevel', '`name` is the name of the priority level configuration being referenced Required.'),
      col('MatchingPrecedence', '`matchingPrecedence` is used to choose among the FlowSchemas that match a given request.'),
      col('DistinguisherMethod', '`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema.'),
      AGE,
      col('MissingPL', 'references a broken or non-existent PriorityLevelConfiguration'),
    ],
    (fs, now) => [
      fs.metadata?.name,
      fs.spec?.priorityLevelConfiguration?.name ?? '',
      fs.spec?.matchingPrecedence ?? 0,
      fs.spec?.distinguisherMethod?.type ?? '<none>',
      age(fs, now),
      fs.status?.conditions?.find((c) => c.type === 'Dangling')?.status ?? '?',
    ],
  ),
  'flowcontrol.apiserver.k8s.io/prioritylevelconfigurations': printer<flowcontrolv1.PriorityLevelConfiguration>(
    [
      NAME,
      col('Type', '`type` indicates whether this priority level is subject to limitation on request execution.'),
      col(
        'NominalConcurrencyShares',
        '`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level.',
      ),
      col('Queues', '`queues` is the number of queues for this priority level.'),
      col('HandSize', '`handSize` is a small positive number that configures the shuffle sharding of requests into queues.'),
      col('QueueLengthLimit', '`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time.'),
      AGE,
    ],
    (pl, now) => {
      const limited = pl.spec?.limited;
      const q = limited?.limitResponse?.queuing;
      const none = '<none>';
      return [
        pl.metadata?.name,
        pl.spec?.type ?? '',
        limited ? (limited.nominalConcurrencyShares ?? 0) : none,
        q ? (q.queues ?? 0) : none,
        q ? (q.handSize ?? 0) : none,
        q ? (q.queueLengthLimit ?? 0) : none,
        age(pl, now),
      ];
    },
  ),
};
