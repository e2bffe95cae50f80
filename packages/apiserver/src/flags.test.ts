/** The flag table: what main.ts parses is what --help prints. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs } from 'node:util';
import { FLAG_SECTIONS, parseArgsOptions, usage } from './flags.js';

test('every flag parses, and --help names each with its type and default', () => {
  const text = usage();
  for (const s of FLAG_SECTIONS) {
    assert.ok(text.includes(`${s.title}:`));
    for (const f of s.flags) assert.match(text, new RegExp(`--${f.name}${f.type === 'boolean' ? '' : ` ${f.type}`} `), f.name);
  }
  assert.match(text, /--secure-port int {2,}.*\(default 6443\)/);
  assert.match(
    text,
    /--enable-admission-plugins strings {2,}admission plugins that should be enabled in addition to default enabled ones \(NamespaceLifecycle, LimitRanger, ServiceAccount, /,
  );
  const names = FLAG_SECTIONS.flatMap((s) => s.flags.map((f) => f.name));
  assert.equal(new Set(names).size, names.length, 'no flag listed twice');
  const { values } = parseArgs({
    options: parseArgsOptions(),
    args: ['--etcd-servers=http://127.0.0.1:1', '--service-account-key-file=a', '--service-account-key-file=b', '--enable-bootstrap-token-auth'],
    strict: true,
  });
  assert.deepEqual(values['service-account-key-file'], ['a', 'b']);
  assert.equal(values['enable-bootstrap-token-auth'], true);
  assert.equal(values['enable-priority-and-fairness'], 'true');
  assert.equal(values['etcd-prefix'], '/registry');
});
