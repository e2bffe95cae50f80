/** IP and CIDR checks: legacy fields sloppy, new fields strict and canonical. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorMessage } from '@kubeling/apimachinery';
import { cidrContains, cidrForLegacyField, familyOf, isValidCIDR, isValidIP, isValidIPForLegacyField } from './ip.js';

const msgs = (errs: Parameters<typeof fieldErrorMessage>[0][]) => errs.map(fieldErrorMessage);

test('strict IPs are canonical, without leading zeros or IPv4-mapped forms', () => {
  assert.deepEqual(msgs(isValidIP('f', '10.1.2.3')), []);
  assert.deepEqual(msgs(isValidIP('f', '2001:db8::1')), []);
  assert.deepEqual(msgs(isValidIP('f', '2001:DB8:0:0:0:0:0:1')), ['f: Invalid value: "2001:DB8:0:0:0:0:0:1": must be in canonical form ("2001:db8::1")']);
  assert.deepEqual(msgs(isValidIP('f', '010.1.2.3')), ['f: Invalid value: "010.1.2.3": must not have leading 0s']);
  assert.deepEqual(msgs(isValidIP('f', '::ffff:1.2.3.4')), ['f: Invalid value: "::ffff:1.2.3.4": must not be an IPv4-mapped IPv6 address']);
  assert.deepEqual(msgs(isValidIP('f', 'nope')), ['f: Invalid value: "nope": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)']);
  assert.deepEqual(msgs(isValidIPForLegacyField('f', '010.1.2.3')), []);
});

test('CIDRs: strict ones canonical, legacy ones parsed; containment and families', () => {
  assert.deepEqual(msgs(isValidCIDR('c', '10.0.0.0/8')), []);
  assert.deepEqual(msgs(isValidCIDR('c', '10.0.0.1/8')), ['c: Invalid value: "10.0.0.1/8": must not have bits set beyond the prefix length']);
  assert.deepEqual(msgs(isValidCIDR('c', 'fd00:0:0::/64')), ['c: Invalid value: "fd00:0:0::/64": must be in canonical form ("fd00::/64")']);
  assert.deepEqual(msgs(isValidCIDR('c', '10.0.0.0/33')), ['c: Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)']);
  const outer = cidrForLegacyField('c', '10.0.0.1/8');
  assert.deepEqual(outer.errs, []);
  assert.equal(outer.cidr!.network, '10.0.0.0/8');
  assert.ok(cidrContains(outer.cidr!, [10, 200, 0, 0]));
  assert.ok(!cidrContains(outer.cidr!, [11, 0, 0, 0]));
  assert.deepEqual([familyOf('10.0.0.0/8'), familyOf('fd00::/8'), familyOf('x')], [4, 6, 0]);
});
