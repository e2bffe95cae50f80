import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isKnownFormat, validatesFormat } from './formats.js';

const check = (format: string, good: string[], bad: string[]): void => {
  for (const v of good) assert.equal(validatesFormat(format, v), true, `${format} should accept ${JSON.stringify(v)}`);
  for (const v of bad) assert.equal(validatesFormat(format, v), false, `${format} should refuse ${JSON.stringify(v)}`);
};

test('the supported set, dashes normalised; int32 & co. are not formats strfmt knows', () => {
  for (const f of [
    'date-time',
    'datetime',
    'date',
    'duration',
    'uuid',
    'uuid3',
    'uuid4',
    'uuid5',
    'byte',
    'password',
    'email',
    'hostname',
    'ipv4',
    'ipv6',
    'cidr',
    'mac',
    'uri',
    'isbn',
    'isbn10',
    'isbn13',
    'creditcard',
    'ssn',
    'hexcolor',
    'rgbcolor',
    'bsonobjectid',
  ])
    assert.equal(isKnownFormat(f), true, f);
  for (const f of ['int32', 'int64', 'float', 'double', 'quantity', 'Date']) assert.equal(isKnownFormat(f), false, f);
  assert.equal(validatesFormat('int32', 'anything'), true);
});

test('dates and times', () => {
  check('date', ['2024-02-29', '2023-12-31'], ['2023-02-29', '2024-13-01', '24-01-01', '2024-1-1', '']);
  check(
    'date-time',
    ['2024-01-02T03:04:05Z', '2024-01-02t03:04:05.123+01:00', '2024-01-02T23:59:59z'],
    ['2024-01-02', '2024-01-02T24:00:00Z', '2024-01-02 03:04:05Z', 'x'],
  );
  check('duration', ['1h30m', '300ms', '-1.5h', '0', '5 days', '3 weeks', '2d'], ['', 'abc', '1x']);
});

test('identifiers and encodings', () => {
  check(
    'uuid',
    ['123e4567-e89b-12d3-a456-426614174000', '123E4567E89B12D3A456426614174000'],
    ['123e4567-e89b-12d3-a456', 'g23e4567-e89b-12d3-a456-426614174000'],
  );
  check('uuid4', ['123e4567-e89b-42d3-a456-426614174000'], ['123e4567-e89b-12d3-a456-426614174000']);
  check('byte', ['aGVsbG8=', 'YWJj'], ['', 'not base64!', 'abc']);
  check('bsonobjectid', ['507f1f77bcf86cd799439011'], ['507f1f77bcf86cd79943901', 'zz7f1f77bcf86cd799439011']);
  check('isbn', ['0321751043', '978-0321751041'], ['0321751044', '978-0321751042']);
  check('creditcard', ['4111 1111 1111 1111'], ['4111 1111 1111 1112']);
  check('ssn', ['123-45-6789', '123 45 6789'], ['123456789', '12-345-6789']);
  check('hexcolor', ['#fff', 'A0B1C2'], ['#ffff', 'ggg']);
  check('rgbcolor', ['rgb(0, 128,255)'], ['rgb(256,0,0)', 'rgba(0,0,0,0)']);
});

test('network formats', () => {
  check('ipv4', ['10.0.0.1', '::ffff:10.0.0.1'], ['10.0.0.256', '010.0.0.1', '::1', 'x']);
  check('ipv6', ['::1', 'fe80::1', '::ffff:10.0.0.1'], ['10.0.0.1', 'fe80::1%eth0', 'x']);
  check('cidr', ['10.0.0.0/8', 'fd00::/64', '10.0.0.0/032'], ['10.0.0.0/33', '10.0.0.0', '10.0.0.0/x']);
  check('mac', ['01:23:45:67:89:ab', '01-23-45-67-89-AB', '0123.4567.89ab', '01:23:45:67:89:ab:cd:ef'], ['01:23:45:67:89', '01:23-45:67:89:ab', 'x']);
  check(
    'hostname',
    ['example.com', 'a', 'my-host.local', 'xn--bcher-kva.example', 'bücher.example'],
    ['-bad.com', 'a..b', 'under_score.com', `${'a'.repeat(64)}.com`],
  );
  check('email', ['a@b.c', 'John Doe <john@example.com>', 'first.last+tag@example.co.uk'], ['plain', 'a@', '@b.c']);
  check(
    'uri',
    ['https://example.com/path?q=1', 'mailto:me@example.com', '/absolute/path', '*'],
    ['relative/path', '', 'http://exa mple.com', 'https://example.com/%zz'],
  );
});
