import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { PrometheusParseError, parsePrometheusText } from './prometheus.js';

// The shape the kubelet's resource metrics collector writes (stats-prometheus.ts, upstream resource_metrics.go).
const KUBELET = `# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="app",namespace="default",pod="web-1"} 12.5 1700000000123
container_cpu_usage_seconds_total{container="side\\"car\\\\x\\ny",namespace="default",pod="web-1"} 1.25e-05 1700000000123
# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 1.073741824e+09 1700000000100
# HELP scrape_error [ALPHA] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE scrape_error gauge
scrape_error 0
`;

test('parses HELP, TYPE and samples with labels, escaped values, exponents and millisecond timestamps', () => {
  const { samples, families } = parsePrometheusText(KUBELET);
  assert.equal(samples.length, 4);
  assert.deepEqual(samples[0], {
    name: 'container_cpu_usage_seconds_total',
    labels: { container: 'app', namespace: 'default', pod: 'web-1' },
    value: 12.5,
    timestampMs: 1700000000123,
  });
  assert.equal(samples[1]!.labels.container, 'side"car\\x\ny');
  assert.equal(samples[1]!.value, 1.25e-5);
  assert.deepEqual(samples[2], { name: 'node_memory_working_set_bytes', labels: {}, value: 1073741824, timestampMs: 1700000000100 });
  assert.deepEqual(samples[3], { name: 'scrape_error', labels: {}, value: 0 });
  assert.deepEqual(families.get('container_cpu_usage_seconds_total'), {
    help: '[STABLE] Cumulative cpu time consumed by the container in core-seconds',
    type: 'counter',
  });
  assert.equal(families.get('node_memory_working_set_bytes')?.type, 'gauge');
});

test('accepts blank lines, other comments, a trailing comma, spaces around labels, special floats and CRLF', () => {
  const { samples } = parsePrometheusText('\n# just a comment\r\nm{a="1", b = "2",} +Inf\r\nn NaN\nk{} -Inf -5\n');
  assert.deepEqual(samples[0]!.labels, { a: '1', b: '2' });
  assert.equal(samples[0]!.value, Number.POSITIVE_INFINITY);
  assert.ok(Number.isNaN(samples[1]!.value));
  assert.equal(samples[2]!.value, Number.NEGATIVE_INFINITY);
  assert.equal(samples[2]!.timestampMs, -5);
});

test('malformed lines throw with their line number', () => {
  const bad: [string, RegExp][] = [
    ['m{a="1"} x', /line 1: invalid value "x"/],
    ['ok 1\nm{a="1} 2', /line 2: unterminated value for label a/],
    ['m{a="\\q"} 1', /invalid escape/],
    ['m{a="1",a="2"} 1', /duplicate label a/],
    ['m{1a="1"} 1', /expected a label name/],
    ['m 1 2.5', /invalid timestamp "2.5"/],
    ['m 1 2 3', /unexpected text after the timestamp/],
    ['m', /expected a value/],
    ['9m 1', /expected a metric name/],
    ['# TYPE m bogus', /invalid metric type "bogus"/],
  ];
  for (const [text, re] of bad)
    assert.throws(
      () => parsePrometheusText(text),
      (e: unknown) => e instanceof PrometheusParseError && re.test(e.message),
      text,
    );
});
