/**
 * Pure parts of the pod placement plugins: toleration whitelists and updates,
 * namespace annotations and configuration checks (PodTolerationRestriction),
 * node selector parsing, conflicts and whitelists (PodNodeSelector).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addOrUpdateToleration, mergeTolerations, validateTolerations, verifyAgainstWhitelist } from './tolerations.js';
import { annotationTolerations, parsePodTolerationRestrictionConfig } from './podtolerationrestriction.js';
import { isLabelSubset, labelsConflict, parsePodNodeSelectorConfig, parseSelectorMap } from './podnodeselector.js';
import { field } from '@kubeling/apimachinery';

const gpu = { key: 'example.com/gpu', operator: 'Exists', effect: 'NoSchedule' };
const dedicated = { key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' };

test('a whitelist covers tolerations its entries are supersets of; an empty one covers all', () => {
  assert.equal(verifyAgainstWhitelist([dedicated], []), true);
  assert.equal(verifyAgainstWhitelist([dedicated], [{ key: 'dedicated', operator: 'Exists' }]), true);
  assert.equal(verifyAgainstWhitelist([dedicated, gpu], [{ key: 'dedicated', operator: 'Exists' }]), false);
  assert.equal(verifyAgainstWhitelist([dedicated], [{ ...dedicated, value: 'web' }]), false);
  assert.equal(verifyAgainstWhitelist([gpu], [{ operator: 'Exists' }]), true);
});

test('merging drops what another toleration covers; the pod’s own come first', () => {
  const mem = { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' };
  assert.deepEqual(mergeTolerations([dedicated], [mem, { key: 'dedicated', operator: 'Exists' }]), [mem, { key: 'dedicated', operator: 'Exists' }]);
  assert.deepEqual(mergeTolerations([mem], [mem]), [mem]);
});

test('addOrUpdateToleration appends, replaces a changed match, and reports no change', () => {
  assert.deepEqual(addOrUpdateToleration([dedicated], gpu), [dedicated, gpu]);
  assert.equal(addOrUpdateToleration([gpu, dedicated], gpu), undefined);
  const ne = { key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 };
  assert.deepEqual(addOrUpdateToleration([ne], { ...ne, tolerationSeconds: 9 }), [{ ...ne, tolerationSeconds: 9 }]);
});

test('tolerations from configurations and annotations are checked as ValidateTolerations does', () => {
  assert.deepEqual(validateTolerations([gpu, dedicated], 'default'), []);
  const msgs = (v: unknown) => validateTolerations(v, 'whitelist').map(field.fieldErrorMessage);
  assert.deepEqual(msgs([{ value: 'x' }]), [
    'whitelist[0].operator: Invalid value: "": operator must be Exists when `key` is empty, which means "match all values and all keys"',
  ]);
  assert.deepEqual(msgs([{ key: 'a', operator: 'Equal', effect: 'NoSchedule', tolerationSeconds: 3 }]), [
    'whitelist[0].effect: Invalid value: "NoSchedule": effect must be \'NoExecute\' when `tolerationSeconds` is set',
  ]);
  assert.deepEqual(msgs([{ key: 'a', operator: 'In', effect: 'Sometimes' }]), [
    'whitelist[0].operator: Unsupported value: "In": supported values: "Equal", "Exists"',
    'whitelist[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
  ]);
});

test('namespace annotations: absent is undefined, empty is an empty list, malformed throws', () => {
  const key = 'scheduler.alpha.kubernetes.io/defaultTolerations';
  assert.equal(annotationTolerations({}, key), undefined);
  assert.deepEqual(annotationTolerations({ [key]: '' }, key), []);
  assert.deepEqual(annotationTolerations({ [key]: JSON.stringify([gpu]) }, key), [gpu]);
  assert.throws(() => annotationTolerations({ [key]: '[{' }, key), { message: new RegExp(`^${key}: `) });
  assert.throws(() => annotationTolerations({ [key]: '{}' }, key), { message: `${key}: must be a JSON list of tolerations` });
});

test('the PodTolerationRestriction configuration is a v1alpha1 Configuration with valid lists', () => {
  const apiVersion = 'podtolerationrestriction.admission.k8s.io/v1alpha1';
  assert.deepEqual(parsePodTolerationRestrictionConfig(undefined), {});
  assert.deepEqual(parsePodTolerationRestrictionConfig({ apiVersion, kind: 'Configuration', default: [gpu] }), { default: [gpu] });
  assert.throws(() => parsePodTolerationRestrictionConfig({ default: [gpu] }), /want apiVersion podtolerationrestriction/);
  assert.throws(
    () => parsePodTolerationRestrictionConfig({ apiVersion, kind: 'Configuration', whitelist: [{ operator: 'Maybe' }] }),
    /whitelist\[0\]\.operator/,
  );
});

test('node selectors parse as ConvertSelectorToLabelsMap; conflicts and whitelists', () => {
  assert.deepEqual(parseSelectorMap(''), {});
  assert.deepEqual(parseSelectorMap('env = prod, zone=a'), { env: 'prod', zone: 'a' });
  assert.throws(() => parseSelectorMap('env'), { message: 'invalid selector: [env]' });
  assert.throws(() => parseSelectorMap('a=b=c'), { message: 'invalid selector: [a b c]' });
  assert.throws(() => parseSelectorMap('bad key=x'), { message: /^invalid label key "bad key": / });
  assert.equal(labelsConflict({ env: 'prod' }, { env: 'dev' }), true);
  assert.equal(labelsConflict({ env: 'prod' }, { env: 'prod', zone: 'a' }), false);
  assert.equal(isLabelSubset({ env: 'prod' }, {}), true);
  assert.equal(isLabelSubset({ env: 'prod' }, { env: 'prod', zone: 'a' }), true);
  assert.equal(isLabelSubset({ env: 'prod', gpu: 'yes' }, { env: 'prod' }), false);
  assert.deepEqual(parsePodNodeSelectorConfig({ podNodeSelectorPluginConfig: { clusterDefaultNodeSelector: 'env=prod' } }).selectors, {
    clusterDefaultNodeSelector: 'env=prod',
  });
  assert.throws(() => parsePodNodeSelectorConfig({ podNodeSelectorPluginConfig: { a: 1 } }), /must map names to selector strings/);
});
