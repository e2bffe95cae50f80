/**
 * The text dumps of /debug/api_priority_and_fairness/ (k8s.io/apiserver
 * pkg/util/flowcontrol apf_controller_debug.go): one row per priority level,
 * per queue, or per request, cells separated by ",\t" and aligned as Go's
 * text/tabwriter (minimum width 8, padding 1, spaces) aligns them. Times are
 * Go's RFC 3339 with nanoseconds in UTC, virtual times seat-seconds with eight
 * decimals and an "ss" suffix, as upstream prints them.
 */
import type { FlowControl } from './controller.js';
import type { RequestDump } from './queueset.js';

const G = 0.003;

/** Go text/tabwriter with minwidth 8, tabwidth 0, padding 1, padchar ' ': tab-terminated cells aligned per column. */
export function tabwrite(text: string): string {
  const lines = text.split('\n').map((l) => l.split('\t'));
  const widths: number[] = [];
  for (const cells of lines) {
    for (let i = 0; i < cells.length - 1; i++) widths[i] = Math.max(widths[i] ?? 8, cells[i]!.length + 1);
  }
  return lines.map((cells) => cells.map((c, i) => (i < cells.length - 1 ? c.padEnd(widths[i]!) : c)).join('')).join('\n');
}

const row = (...cells: (string | number | boolean)[]) => cells.map(String).join(',\t');

/** Go's time.Time.UTC().Format(time.RFC3339Nano); the zero time when undefined. */
export function goTime(ms: number | undefined): string {
  if (ms === undefined) return '0001-01-01T00:00:00Z';
  const seconds = Math.floor(ms / 1000);
  const nanos = Math.round((ms - seconds * 1000) * 1e6);
  const base = new Date(seconds * 1000).toISOString().slice(0, 19);
  const frac = nanos > 0 ? `.${String(Math.min(nanos, 999_999_999)).padStart(9, '0').replace(/0+$/, '')}` : '';
  return `${base}${frac}Z`;
}

/** SeatSeconds.String(): `%d.%08dss`. */
export function seatSeconds(v: number): string {
  const scaled = Math.round(v * 1e8);
  const sign = scaled < 0 ? '-' : '';
  const abs = Math.abs(scaled);
  return `${sign}${Math.floor(abs / 1e8)}.${String(abs % 1e8).padStart(8, '0')}ss`;
}

export function dumpPriorityLevels(fc: FlowControl): string {
  const out = [
    row(
      'PriorityLevelName',
      'ActiveQueues',
      'IsIdle',
      'IsQuiescing',
      'WaitingRequests',
      'ExecutingRequests',
      'DispatchedRequests',
      'RejectedRequests',
      'TimedoutRequests',
      'CancelledRequests',
    ),
  ];
  for (const [name, st] of fc.levels()) {
    const d = st.queues.dump();
    const active = d.queues.filter((q) => q.waiting.length > 0).length;
    out.push(row(name, active, st.queues.isIdle, st.quiescing, d.waiting, d.executing, d.dispatched, d.rejected, d.timedout, d.cancelled));
  }
  return tabwrite(`${out.join('\n')}\n`);
}

export function dumpQueues(fc: FlowControl): string {
  const out = [
    row('PriorityLevelName', 'Index', 'PendingRequests', 'ExecutingRequests', 'SeatsInUse', 'NextDispatchR', 'InitialSeatsSum', 'MaxSeatsSum', 'TotalWorkSum'),
  ];
  for (const [name, st] of fc.levels()) {
    st.queues.dump().queues.forEach((q, i) => {
      const n = q.waiting.length;
      out.push(row(name, i, n, q.executing.length, q.seatsInUse, seatSeconds(q.nextDispatchR), n, n, seatSeconds(n * G)));
    });
  }
  return tabwrite(`${out.join('\n')}\n`);
}

export function dumpRequests(fc: FlowControl, includeDetails: boolean): string {
  const head = [
    'PriorityLevelName',
    'FlowSchemaName',
    'QueueIndex',
    'RequestIndexInQueue',
    'FlowDistingsher',
    'ArriveTime',
    'InitialSeats',
    'FinalSeats',
    'AdditionalLatency',
    'StartTime',
  ];
  const details = ['UserName', 'Verb', 'APIPath', 'Namespace', 'Name', 'APIVersion', 'Resource', 'SubResource'];
  const out = [row(...head, ...(includeDetails ? details : []))];
  for (const [name, st] of fc.levels()) {
    const line = (iq: number, ir: number, r: RequestDump) => {
      const d = r.descr;
      const gv = d.apiGroup ? `${d.apiGroup}/${d.apiVersion}` : d.apiVersion;
      const extra = includeDetails ? [d.user, d.verb, d.path, d.namespace, d.name, gv, d.resource, d.subresource] : [];
      out.push(row(name, d.flowSchema, iq, ir, d.flowDistinguisher, goTime(r.arrivalMs), 1, 0, '0s', goTime(r.startMs), ...extra));
    };
    const dump = st.queues.dump();
    dump.queues.forEach((q, iq) => {
      q.waiting.forEach((r, ir) => line(iq, ir, r));
      for (const r of q.executing) line(iq, -1, r);
    });
    for (const r of dump.queueless) line(-1, -1, r);
  }
  return tabwrite(`${out.join('\n')}\n`);
}
