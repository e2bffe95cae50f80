/**
 * events.k8s.io/v1: Event, as upstream Kubernetes 1.32 (`k8s.io/api/events/v1`).
 * It shares storage with core/v1 events; it has no spec/status, its fields sit
 * at the top level.
 */
import { described, int32, object, string, time, type Static } from '../schema/dsl.js';
import { kindOf } from '../schema/meta.js';
import { EventSource, ObjectReference } from './core-v1.js';

const E = 'io.k8s.api.events.v1.';

export const EventSeries = object(
  E + 'EventSeries',
  'EventSeries contain information on series of events, i.e. thing that was/is happening continuously for some time.',
  {
    count: int32('count is the number of occurrences in this series up to the last heartbeat time.'),
    lastObservedTime: time('lastObservedTime is the time when last Event from the series was seen before last heartbeat.'),
  },
  ['count', 'lastObservedTime'],
);

export const Event = kindOf(E + 'Event', 'Event is a report of an event somewhere in the cluster.', {
  eventTime: time('eventTime is the time when this Event was first observed. It is required.'),
  series: described(EventSeries, "series is data about the Event series this event represents or nil if it's a singleton Event."),
  reportingController: string('reportingController is the name of the controller that emitted this Event, e.g. `kubernetes.io/kubelet`.'),
  reportingInstance: string('reportingInstance is the ID of the controller instance, e.g. `kubelet-xyzf`.'),
  action: string('action is what action was taken/failed regarding to the regarding object.'),
  reason: string('reason is why the action was taken. It is human-readable.'),
  regarding: described(ObjectReference, 'regarding contains the object this Event is about.'),
  related: described(ObjectReference, 'related is the optional secondary object for more complex actions.'),
  note: string('note is a human-readable description of the status of this operation.'),
  type: string('type is the type of this event (Normal, Warning); new types could be added in the future.'),
  deprecatedSource: described(EventSource, 'deprecatedSource is the deprecated field assuring backward compatibility with core.v1 Event type.'),
  deprecatedFirstTimestamp: time('deprecatedFirstTimestamp is the deprecated field assuring backward compatibility with core.v1 Event type.'),
  deprecatedLastTimestamp: time('deprecatedLastTimestamp is the deprecated field assuring backward compatibility with core.v1 Event type.'),
  deprecatedCount: int32('deprecatedCount is the deprecated field assuring backward compatibility with core.v1 Event type.'),
});

export type EventSeries = Static<typeof EventSeries>;
export type Event = Static<typeof Event>;
