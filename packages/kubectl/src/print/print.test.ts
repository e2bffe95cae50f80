import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonpath } from '@kubeling/apimachinery';

const { evaluate, select } = jsonpath;
import { executeTemplate } from './gotemplate.js';
import { tabwrite } from './tabwriter.js';
import { columns, parseOutput, printObjects } from './printers.js';

const pod = {
  kind: 'Pod',
  metadata: { name: 'web', labels: { app: 'web', tier: 'fe' } },
  spec: {
    containers: [
      { name: 'a', image: 'nginx' },
      { name: 'b', image: 'busybox' },
    ],
  },
  status: {
    phase: 'Running',
    conditions: [
      { type: 'PodScheduled', status: 'True' },
      { type: 'Ready', status: 'False' },
    ],
  },
};
const list = { kind: 'List', items: [pod, { ...pod, metadata: { name: 'db' } }] };

test('jsonpath: fields, wildcards, filters, range, unions, literals, slices, recursion', () => {
  assert.equal(evaluate('{.metadata.name}', pod), 'web');
  assert.equal(evaluate('{.spec.containers[*].image}', pod), 'nginx busybox');
  assert.equal(evaluate('{.status.conditions[?(@.type=="Ready")].status}', pod), 'False');
  assert.equal(evaluate('{range .items[*]}{.metadata.name}{"\\n"}{end}', list), 'web\ndb\n');
  assert.equal(evaluate('{.spec.containers[-1].name}', pod), 'b');
  assert.equal(evaluate('{.spec.containers[0:1].name}', pod), 'a');
  assert.equal(evaluate("{.metadata.labels['app']}", pod), 'web');
  assert.equal(evaluate('{.metadata.labels}', pod), '{"app":"web","tier":"fe"}');
  assert.equal(evaluate('{..image}', pod), 'nginx busybox');
  assert.equal(evaluate('{.nope}', pod), '');
  assert.equal(evaluate('name={.metadata.name} phase={.status.phase}', pod), 'name=web phase=Running');
  assert.deepEqual(select('.status.phase', pod), ['Running']);
});

test('go-template: fields, range with else, if/eq, index, len, printf, variables, missing keys', () => {
  const readyQ = '{{range .status.conditions}}{{if eq .type "Ready"}}{{.status}}{{end}}{{end}}';
  assert.equal(executeTemplate(readyQ, pod), 'False');
  assert.equal(executeTemplate('{{range .status.conditions}}{{if eq .type "PodScheduled"}}{{.status}}{{end}}{{end}}', pod), 'True');
  assert.equal(executeTemplate('{{.metadata.name}}', pod), 'web');
  assert.equal(executeTemplate('{{range .items}}{{.metadata.name}} {{end}}', list), 'web db ');
  assert.equal(executeTemplate('{{range .nothing}}x{{else}}empty{{end}}', pod), 'empty');
  assert.equal(executeTemplate('{{index .metadata.labels "app"}}', pod), 'web');
  assert.equal(executeTemplate('{{len .spec.containers}}', pod), '2');
  assert.equal(executeTemplate('{{printf "%s-%d" .metadata.name 3}}', pod), 'web-3');
  assert.equal(executeTemplate('{{$n := .metadata.name}}{{range .spec.containers}}{{$n}}/{{.name}} {{end}}', pod), 'web/a web/b ');
  assert.equal(executeTemplate('{{range $i, $c := .spec.containers}}{{$i}}={{$c.image}};{{end}}', pod), '0=nginx;1=busybox;');
  assert.equal(executeTemplate('{{.metadata.missing}}', pod), '<no value>');
  assert.equal(executeTemplate('{{.metadata.labels}}', pod), 'map[app:web tier:fe]');
  assert.equal(executeTemplate('{{if and .metadata .status}}yes{{else if .x}}x{{else}}no{{end}}', pod), 'yes');
  assert.equal(executeTemplate('{{- " a " -}}  {{ .metadata.name }}', pod), ' a web');
  assert.equal(executeTemplate('{{.metadata.name | printf "%q"}}', pod), '"web"');
  assert.equal(executeTemplate('{{with .status}}{{.phase}}{{end}}', pod), 'Running');
  assert.equal(executeTemplate('{{/* a comment */}}ok', pod), 'ok');
  assert.throws(() => executeTemplate('{{nosuch .x}}', pod), /function "nosuch" not defined/);
  assert.throws(() => executeTemplate('{{if .x}}', pod), /unexpected EOF/);
});

test('tabwriter: column blocks as Go aligns them', () => {
  assert.equal(tabwrite('Name:\tweb\nNamespace:\tdefault\nIPs:\n  IP:\t1.2.3.4'), 'Name:       web\nNamespace:  default\nIPs:\n  IP:  1.2.3.4');
  assert.equal(tabwrite('  Type\tStatus\n  Ready \tTrue '), '  Type    Status\n  Ready   True ');
});

test('printers: -o name/json/custom-columns, the formats kubectl accepts', () => {
  const nameOf = (o: Record<string, any>) => `pod/${o.metadata.name}`;
  assert.equal(printObjects({ t: 'name' }, list.items, false, { nameOf }), 'pod/web\npod/db\n');
  assert.equal(
    printObjects(parseOutput('custom-columns=NAME:.metadata.name,IMAGES:.spec.containers[*].image'), list.items, false, { nameOf }),
    'NAME   IMAGES\nweb    nginx,busybox\ndb     nginx,busybox\n',
  );
  assert.equal(printObjects(parseOutput('custom-columns=NAME:.metadata.name,X:.nope'), [pod], true, { nameOf, noHeaders: true }), 'web   <none>\n');
  assert.match(printObjects({ t: 'json' }, [pod], true, { nameOf }), /^\{\n {4}"kind": "Pod",\n {4}"metadata"/);
  assert.match(printObjects({ t: 'json' }, [pod], false, { nameOf }), /"kind": "List"/);
  assert.equal(printObjects(parseOutput('jsonpath={.items[*].metadata.name}'), list.items, false, { nameOf }), 'web db');
  assert.equal(printObjects(parseOutput('go-template={{.metadata.name}}'), [pod], true, { nameOf }), 'web');
  assert.throws(() => parseOutput('bogus'), /unable to match a printer suitable for the output format "bogus"/);
  assert.equal(
    columns([
      ['A', 'B'],
      ['x', 'y'],
    ]),
    'A     B\nx     y\n',
  );
});

test('jsonpath escaped dots, custom-columns maps as Go prints them, go-template nil as <no value>', () => {
  const node = { metadata: { labels: { 'kubernetes.io/hostname': 'n1', app: 'x' } }, spec: { x: null } };
  assert.equal(evaluate('{.metadata.labels.kubernetes\\.io/hostname}', node), 'n1');
  assert.equal(
    printObjects(parseOutput('custom-columns=L:.metadata.labels'), [node], true, { nameOf: () => 'n', noHeaders: true }),
    'map[app:x kubernetes.io/hostname:n1]\n',
  );
  assert.equal(executeTemplate('{{.spec.x}}|{{index .metadata.labels "absent"}}', node), '<no value>|<no value>');
});
