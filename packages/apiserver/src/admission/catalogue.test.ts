/** The admission plugin catalogue: upstream's order and defaults, the flags' checks and help. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ADMISSION_PLUGINS,
  DEFAULT_ON_PLUGINS,
  RECOMMENDED_PLUGIN_ORDER,
  admissionFlagsHelp,
  enabledAdmissionPlugins,
  validateAdmissionPluginFlags,
} from './catalogue.js';

test('the catalogue keeps upstream order: namespaces first, webhooks, quota and AlwaysDeny last', () => {
  assert.equal(new Set(RECOMMENDED_PLUGIN_ORDER).size, RECOMMENDED_PLUGIN_ORDER.length);
  assert.deepEqual(RECOMMENDED_PLUGIN_ORDER.slice(0, 4), ['AlwaysAdmit', 'NamespaceAutoProvision', 'NamespaceLifecycle', 'NamespaceExists']);
  assert.deepEqual(RECOMMENDED_PLUGIN_ORDER.slice(-6), [
    'MutatingAdmissionPolicy',
    'MutatingAdmissionWebhook',
    'ValidatingAdmissionPolicy',
    'ValidatingAdmissionWebhook',
    'ResourceQuota',
    'AlwaysDeny',
  ]);
  const at = (n: string) => RECOMMENDED_PLUGIN_ORDER.indexOf(n);
  assert.ok(at('LimitRanger') < at('ServiceAccount') && at('ServiceAccount') < at('NodeRestriction'));
  assert.ok(at('PodSecurity') < at('PodNodeSelector') && at('Priority') < at('DefaultTolerationSeconds'));
  assert.ok(at('DefaultTolerationSeconds') < at('PodTolerationRestriction') && at('PodTolerationRestriction') < at('EventRateLimit'));
  for (const p of ADMISSION_PLUGINS) assert.ok(p.description.length > 10, p.name);
});

test('default-on plugins are upstream’s, in running order; removed and off-by-default ones are not among them', () => {
  for (const n of ['NamespaceLifecycle', 'LimitRanger', 'ServiceAccount', 'PodSecurity', 'Priority', 'ResourceQuota'])
    assert.ok(DEFAULT_ON_PLUGINS.includes(n), n);
  for (const n of ['EventRateLimit', 'PodNodeSelector', 'ImagePolicyWebhook', 'SecurityContextDeny', 'DenyEscalatingExec', 'AlwaysDeny', 'NodeRestriction'])
    assert.ok(!DEFAULT_ON_PLUGINS.includes(n), n);
  assert.deepEqual(
    DEFAULT_ON_PLUGINS,
    RECOMMENDED_PLUGIN_ORDER.filter((n) => DEFAULT_ON_PLUGINS.includes(n)),
  );
  const unavailable = ADMISSION_PLUGINS.filter((p) => p.unavailable).map((p) => p.name);
  for (const n of ['ClusterTrustBundleAttest', 'MutatingAdmissionPolicy']) assert.ok(unavailable.includes(n), n);
  // The storage plugins run: StorageClasses and PersistentVolumes are served.
  for (const n of ['DefaultStorageClass', 'StorageObjectInUseProtection', 'PersistentVolumeClaimResize']) {
    assert.ok(!unavailable.includes(n), n);
    assert.ok(DEFAULT_ON_PLUGINS.includes(n), n);
  }
});

test('unknown and overlapping names are refused with upstream’s messages', () => {
  assert.deepEqual(validateAdmissionPluginFlags(['EventRateLimit'], ['Priority']), []);
  assert.deepEqual(validateAdmissionPluginFlags(['Nope'], []), ['enable-admission-plugins plugin "Nope" is unknown']);
  assert.deepEqual(validateAdmissionPluginFlags([], ['Nada']), ['disable-admission-plugins plugin "Nada" is unknown']);
  assert.deepEqual(validateAdmissionPluginFlags(['Priority', 'LimitRanger'], ['LimitRanger', 'Priority']), [
    '[LimitRanger Priority] in enable-admission-plugins and disable-admission-plugins overlapped',
  ]);
  assert.throws(() => enabledAdmissionPlugins({ enable: ['Nope'] }), { message: 'enable-admission-plugins plugin "Nope" is unknown' });
  assert.throws(() => enabledAdmissionPlugins({ enable: ['A'], disable: ['B'] }), {
    message: '[enable-admission-plugins plugin "A" is unknown, disable-admission-plugins plugin "B" is unknown]',
  });
});

test('the enabled plugins are the defaults plus enable minus disable, in catalogue order whatever the flags’ order', () => {
  const on = enabledAdmissionPlugins({ enable: ['AlwaysDeny', 'EventRateLimit', 'NamespaceAutoProvision'], disable: ['Priority'] });
  assert.equal(on[0], 'NamespaceAutoProvision');
  assert.equal(on.at(-1), 'AlwaysDeny');
  assert.ok(on.indexOf('EventRateLimit') > on.indexOf('DefaultTolerationSeconds'));
  assert.ok(!on.includes('Priority'));
  assert.ok(enabledAdmissionPlugins({ extraDefaults: ['NodeRestriction'] }).includes('NodeRestriction'));
  assert.ok(!enabledAdmissionPlugins({ extraDefaults: ['NodeRestriction'], disable: ['NodeRestriction'] }).includes('NodeRestriction'));
});

test('upstream defaults are on: TaintNodesByCondition and PodSecurity included, NodeRestriction not', () => {
  const on = enabledAdmissionPlugins({});
  for (const n of ['NamespaceLifecycle', 'TaintNodesByCondition', 'PodSecurity', 'ResourceQuota']) assert.ok(on.includes(n), n);
  assert.ok(!on.includes('NodeRestriction'));
});

test('the flags’ help lists the defaults in order and every plugin sorted', () => {
  const { enable, disable } = admissionFlagsHelp();
  assert.match(enable, /^admission plugins that should be enabled in addition to default enabled ones \(NamespaceLifecycle, LimitRanger, ServiceAccount, /);
  assert.match(enable, /Comma-delimited list of admission plugins: AlwaysAdmit, AlwaysDeny, AlwaysPullImages, CSIDriverRestriction, CertificateApproval, /);
  assert.match(disable, /^admission plugins that should be disabled although they are in the default enabled plugins list \(/);
  assert.match(
    enable,
    /The order of plugins in this flag does not matter\. Accepted but idle until their resources are served: [A-Za-z, ]*ClusterTrustBundleAttest/,
  );
  assert.ok(!/default enabled ones \([^)]*ClusterTrustBundleAttest/.test(enable), 'idle plugins are not named among the defaults');
  assert.match(enable, /DefaultTolerationSeconds, DefaultStorageClass, StorageObjectInUseProtection, PersistentVolumeClaimResize, RuntimeClass/);
});

test('every plugin the catalogue does not mark unavailable is registered, and only catalogue names are', async () => {
  const { registeredAdmissionPlugins } = await import('./setup.js');
  const registered = registeredAdmissionPlugins();
  const missing = ADMISSION_PLUGINS.filter((p) => !p.unavailable && !registered.includes(p.name)).map((p) => p.name);
  // NamespaceLifecycle is every store's own check (registry/namespaces.ts).
  assert.deepEqual(missing, ['NamespaceLifecycle']);
  for (const n of registered) assert.ok(RECOMMENDED_PLUGIN_ORDER.includes(n), n);
  for (const p of ADMISSION_PLUGINS.filter((x) => x.unavailable)) assert.ok(!registered.includes(p.name), p.name);
});
