/**
 * The Kubernetes CEL libraries (k8s.io/apiserver/pkg/cel/library: lists,
 * sets, regex, quantity, url, ip, cidr, format), cel-go's strings extension
 * and the optional math/base64 libraries, with upstream's documented examples
 * and error texts. Inputs come from a variable where a constant would be
 * folded at compile time.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { celEnv, compileExpression, evaluate } from './env.js';
import { T } from './types.js';
import { CelError, ListV, type MapV, type OptionalV, type Val } from './values.js';

const ENV = celEnv({ v: T.dyn, s: T.string });
const EXTRAS = celEnv({ v: T.dyn }, { libraries: ['math', 'encoders'] });

function run(expr: string, v: Val = null, env = ENV): Val | string {
  const c = compileExpression(expr, env);
  assert.ok(c.program, `${expr}: ${c.issues}`);
  assert.equal(c.programError, undefined, expr);
  const r = evaluate(c.program, { v, s: typeof v === 'string' ? v : '' });
  return r.value instanceof CelError ? `error: ${r.value.message}` : r.value;
}
const items = (x: Val | string) => (x as ListV).items();
const ok = (expr: string, v: Val = null) => assert.equal(run(expr, v), true, expr);

describe('lists library', () => {
  it('isSorted, sum, min, max, indexOf, lastIndexOf', () => {
    ok('[1, 2, 3].isSorted() && ["a", "b", "b", "c"].isSorted() && ![2.0, 1.0].isSorted() && [].isSorted()');
    ok('[1, 3].sum() == 4 && [1.0, 3.0].sum() == 4.0 && [duration("1m"), duration("1s")].sum() == duration("61s") && [].sum() == 0');
    ok('[1, 3].min() == 1 && [1, 3].max() == 3 && ["b", "a"].min() == "a" && [timestamp("2020-01-01T00:00:00Z")].max() > timestamp("2000-01-01T00:00:00Z")');
    ok('[1, 2, 2, 3].indexOf(2) == 1 && ["a", "b", "b", "c"].lastIndexOf("b") == 2 && [1.0].indexOf(1.1) == -1 && [].indexOf("x") == -1');
    assert.equal(run('dyn([]).min()'), 'error: min called on empty list');
    assert.equal(run('[9223372036854775807, 1].sum()'), 'error: integer overflow');
  });
});

describe('sets extension', () => {
  it('contains, equivalent, intersects', () => {
    ok('sets.contains([1, 2, 3], [2, 3]) && !sets.contains([1], [1, 2]) && sets.contains([1], [])');
    ok('sets.equivalent([1, 2, 2], [2, 1]) && !sets.equivalent([1], [1, 2])');
    ok('sets.intersects([1, 2], [2, 5]) && !sets.intersects([1], [])');
    ok('sets.contains([1.0], [1])'.replace('[1.0], [1]', '[dyn(1.0)], [dyn(1)]'));
  });
});

describe('regex library', () => {
  it('find and findAll', () => {
    assert.equal(run("'abc 123'.find('[0-9]+')"), '123');
    assert.equal(run("'abc'.find('[0-9]+')"), '');
    assert.deepEqual(items(run("'123 abc 456'.findAll('[0-9]+')")), ['123', '456']);
    assert.deepEqual(items(run("'123 abc 456'.findAll('[0-9]+', 1)")), ['123']);
    assert.deepEqual(items(run("'a1b2'.findAll('(?i)[A-Z]', -1)")), ['a', 'b']);
    assert.match(run("'x'.find(s)", '(') as string, /^error: Illegal regex: error parsing regexp: /);
    assert.match(compileExpression("'x'.find('(')", ENV).programError!, /^error parsing regexp: /);
  });
});

describe('quantity library', () => {
  it('parses and compares quantities exactly', () => {
    ok("quantity('200M').compareTo(quantity('0.2G')) == 0 && quantity('50M').compareTo(quantity('50Mi')) == -1");
    ok("quantity('150Mi').isGreaterThan(quantity('100Mi')) && quantity('50M').isLessThan(quantity('100M'))");
    ok("quantity('1') == quantity('1000m') && quantity('1Ki') == quantity('1024')");
    ok("isQuantity('1.5Gi') && !isQuantity('1.5Gix') && !isQuantity('')");
  });
  it('does arithmetic', () => {
    ok("quantity('50k').add(quantity('20k')) == quantity('70k') && quantity('50k').add(20) == quantity('50020')");
    ok("quantity('50k').sub(quantity('20k')) == quantity('30k') && quantity('50k').sub(20000) == quantity('30k')");
    ok("quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')");
    ok("quantity('0.1').add(quantity('0.2')) == quantity('300m')");
  });
  it('converts', () => {
    assert.equal(run("quantity('2000m').asInteger()"), 2n);
    assert.equal(run("quantity('1.5').asInteger()"), 'error: cannot convert value to integer');
    assert.equal(run("quantity('1.5').isInteger()"), false);
    // ParseQuantity caps values at 2^63-1, so even 1e20 is an int64
    assert.equal(run("quantity('1e20').asInteger()"), 9223372036854775807n);
    assert.equal(run("quantity('1.5Gi').asApproximateFloat()"), 1610612736);
    assert.deepEqual(items(run("[quantity('-1').sign(), quantity('0').sign(), quantity('5m').sign()]")), [-1n, 0n, 1n]);
    assert.equal(run("quantity('1n').add(quantity('1.0000000001')) == quantity('1000000002n')"), true);
  });
  it('refuses invalid quantities as ParseQuantity does', () => {
    assert.equal(run('quantity(s)', '1e'), "error: unable to parse quantity's suffix");
    assert.equal(run('quantity(s)', 'abc'), "error: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  });
});

describe('url library', () => {
  it('has the accessors of Go url.URL', () => {
    const u = "url('https://user@example.com:8080/a%20b/c?x=1&x=2&y=%3D#frag')";
    assert.equal(run(`${u}.getScheme()`), 'https');
    assert.equal(run(`${u}.getHost()`), 'example.com:8080');
    assert.equal(run(`${u}.getHostname()`), 'example.com');
    assert.equal(run(`${u}.getPort()`), '8080');
    assert.equal(run(`${u}.getEscapedPath()`), '/a%20b/c');
    const q = run(`${u}.getQuery()`) as MapV;
    assert.deepEqual((q.find('x') as ListV).items(), ['1', '2']);
    assert.deepEqual((q.find('y') as ListV).items(), ['=']);
    assert.equal(run("url('https://[::1]:80/').getHostname() + ' ' + url('https://[::1]:80/').getHost()"), '::1 [::1]:80');
    ok("url('/absolute-path').getScheme() == '' && url('/absolute-path').getEscapedPath() == '/absolute-path'");
  });
  it('accepts what ParseRequestURI accepts', () => {
    ok("isURL('https://example.com') && isURL('/path') && !isURL('relative/path') && !isURL('')");
    assert.equal(run('url(s)', 'relative'), 'error: URL parse error during conversion from string: parse "relative": invalid URI for request');
    assert.equal(
      run('url(s)', 'http://host:port/'),
      'error: URL parse error during conversion from string: parse "http://host:port/": invalid port ":port" after host',
    );
  });
});

describe('ip and cidr libraries', () => {
  it('parses addresses as netip does', () => {
    ok("isIP('192.168.0.1') && isIP('::1') && !isIP('192.168.0.01') && !isIP('::ffff:1.2.3.4') && !isIP('fe80::1%eth0')");
    ok("ip('192.168.0.1').family() == 4 && ip('2001:db8::1').family() == 6");
    assert.equal(run("string(ip('2001:0db8:0000:0000:0000:0000:0000:0001'))"), '2001:db8::1');
    ok("ip.isCanonical('2001:db8::1') && !ip.isCanonical('2001:DB8::1') && ip.isCanonical('127.0.0.1')");
    assert.equal(run('ip(s)', '1.2.3'), 'error: IP Address "1.2.3" parse error during conversion from string: ParseAddr("1.2.3"): IPv4 address too short');
    assert.equal(
      run('ip(s)', '1.2.3.04'),
      'error: IP Address "1.2.3.04" parse error during conversion from string: ParseAddr("1.2.3.04"): IPv4 field has octet with leading zero',
    );
    assert.equal(run('ip(s)', '::ffff:1.2.3.4'), 'error: IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed');
    assert.equal(run('ip(s)', 'fe80::1%eth0'), 'error: IP address "fe80::1%eth0" with zone value is not allowed');
    assert.equal(run('ip(s)', 'nope'), 'error: IP Address "nope" parse error during conversion from string: ParseAddr("nope"): unable to parse IP');
  });
  it('classifies addresses', () => {
    ok("ip('0.0.0.0').isUnspecified() && ip('::').isUnspecified() && !ip('127.0.0.1').isUnspecified()");
    ok("ip('127.0.0.1').isLoopback() && ip('::1').isLoopback() && !ip('2001:db8::abcd').isLoopback()");
    ok("ip('224.0.0.1').isLinkLocalMulticast() && !ip('224.0.1.1').isLinkLocalMulticast() && ip('ff02::1').isLinkLocalMulticast()");
    ok("ip('169.254.169.254').isLinkLocalUnicast() && ip('fe80::1').isLinkLocalUnicast() && !ip('fd80::1').isLinkLocalUnicast()");
    ok(
      "ip('192.168.0.1').isGlobalUnicast() && !ip('255.255.255.255').isGlobalUnicast() && ip('2001:db8::abcd').isGlobalUnicast() && !ip('ff00::1').isGlobalUnicast()",
    );
    ok("ip('10.0.0.1') == ip('10.0.0.1') && ip('::1') != ip('::2')");
  });
  it('works with CIDRs', () => {
    ok("cidr('192.168.0.0/24').containsIP(ip('192.168.0.1')) && !cidr('192.168.0.0/24').containsIP('192.168.1.1')");
    ok("cidr('192.168.0.0/16').containsCIDR(cidr('192.168.10.0/24')) && !cidr('192.168.1.0/24').containsCIDR('192.168.2.0/24')");
    ok("cidr('192.168.0.1/24').ip() == ip('192.168.0.1') && cidr('::1/128').ip().family() == 6");
    ok("cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24') && cidr('192.168.0.1/24') != cidr('192.168.0.1/24').masked()");
    ok("cidr('192.168.0.0/16').prefixLength() == 16 && string(cidr('2001:db8::/32')) == '2001:db8::/32'");
    ok("isCIDR('10.0.0.0/8') && !isCIDR('10.0.0.0') && !isCIDR('10.0.0.0/33')");
    assert.equal(
      run('cidr(s)', '10.0.0.0'),
      'error: network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("10.0.0.0"): no \'/\'',
    );
  });
});

describe('format library', () => {
  it('validates named formats', () => {
    ok("format.named('dns1123Label').value().validate('my-name') == optional.none()");
    const errs = run("format.named('dns1123Label').value().validate('My_Name')") as OptionalV;
    assert.match(((errs.value as ListV).items()[0] as string) ?? '', /^a lowercase RFC 1123 label must consist of/);
    ok("!format.named('nope').hasValue()");
    ok("format.dns1123Subdomain().validate('apiextensions.k8s.io') == optional.none() && format.qualifiedName().validate('a/b/c').hasValue()");
    ok(
      "format.uuid().validate('123e4567-e89b-12d3-a456-426614174000') == optional.none() && format.uuid().validate('x').value() == ['does not match the UUID format']",
    );
    ok("format.byte().validate('aGVsbG8=') == optional.none() && format.date().validate('2021-13-01').value() == ['invalid date']");
    ok(
      "format.datetime().validate('2021-01-01T00:00:00Z') == optional.none() && format.uri().validate('x').value() == ['parse \"x\": invalid URI for request']",
    );
    ok("format.labelValue() == format.named('labelValue').value() && format.dns1035LabelPrefix() != format.dns1035Label()");
  });
});

describe('strings extension', () => {
  it('indexes by code point', () => {
    ok("'Rook takes 👑'.charAt(11) == '👑' && 'abc'.charAt(3) == '' && 'hello'.indexOf('l') == 2 && 'hello'.indexOf('l', 3) == 3");
    ok("'hello'.lastIndexOf('l') == 3 && 'hello'.lastIndexOf('l', 2) == 2 && 'hello'.indexOf('') == 0 && 'hello'.lastIndexOf('') == 5");
    assert.equal(run("'abc'.charAt(4)"), 'error: index out of range: 4');
    assert.equal(run("'abc'.indexOf('b', 5)"), 'error: index out of range: 5');
    ok("'👑ab'.substring(1) == 'ab' && 'hello'.substring(1, 3) == 'el'");
    assert.equal(run("'hello'.substring(3, 1)"), 'error: invalid substring range. start: 3, end: 1');
  });
  it('transforms strings', () => {
    ok("'TacoCat'.lowerAscii() == 'tacocat' && 'TacoCÆt'.upperAscii() == 'TACOCÆT' && '  \\t trim\\n '.trim() == 'trim'");
    ok("'hello hello'.replace('he', 'we') == 'wello wello' && 'hello hello'.replace('he', 'we', 1) == 'wello hello' && 'ab'.replace('', '-') == '-a-b-'");
    ok("'a,b,c'.split(',') == ['a', 'b', 'c'] && 'a,b,c'.split(',', 2) == ['a', 'b,c'] && 'abc'.split('') == ['a', 'b', 'c'] && 'a'.split(',', 0) == []");
    ok("['a', 'b'].join() == 'ab' && ['a', 'b'].join('-') == 'a-b' && [].join(',') == ''");
    ok('strings.quote(\'a"b\\n\') == \'"a\\\\"b\\\\n"\'');
  });
  it('formats', () => {
    assert.equal(run("'%s %d %f %.2f %e'.format(['x', dyn(42), dyn(3.5), dyn(2.345), dyn(1234.5)])"), 'x 42 3.500000 2.35 1.234500e+03');
    assert.equal(run("'%x %X %o %b %x'.format([255, 255, 8, 5, dyn('hi')])"), 'ff FF 10 101 6869');
    assert.equal(run("'%s %s %s'.format([dyn([1, dyn('a')]), dyn({'k': 1}), dyn(null)])"), '[1, "a"] {"k": 1} null');
    // Kubernetes enables HomogeneousAggregateLiterals, so mixed arguments need dyn()
    assert.match(compileExpression("'%s %d'.format(['x', 42])", ENV).issues!, /expected type 'string' but found 'int'/);
    assert.equal(run("'%d'.format([1.5])"), 'error: error during formatting: decimal clause can only be used on integers, was given double');
    assert.equal(run("'%s %s'.format(['a'])"), 'error: index 1 out of range');
    ok("'100%% %s'.format(['sure']) == '100% sure'");
  });
});

describe('math and base64 extensions (opt-in)', () => {
  it('are absent from the Kubernetes environment', () => {
    assert.match(compileExpression('math.greatest(1, 2)', ENV).issues!, /undeclared reference to 'math.greatest'|undeclared reference to 'math'/);
  });
  it('compute', () => {
    assert.equal(run('math.greatest(1, 5, 3)', null, EXTRAS), 5n);
    assert.equal(run('math.least([4.0, 2.5])', null, EXTRAS), 2.5);
    assert.equal(run('math.greatest(1, 2.5)', null, EXTRAS), 2.5);
    assert.equal(run('math.abs(-3) + math.sign(-7)', null, EXTRAS), 2n);
    assert.deepEqual(items(run('[math.ceil(1.2), math.floor(1.8), math.round(-1.5), math.trunc(-1.7)]', null, EXTRAS)), [2, 1, -2, -1]);
    assert.equal(run('math.bitShiftLeft(1, 3) | 0'.replace(' | 0', ''), null, EXTRAS), 8n);
    assert.equal(run("base64.encode(b'hello')", null, EXTRAS), 'aGVsbG8=');
    assert.equal(run('string(base64.decode(v))', 'aGVsbG8=', EXTRAS), 'hello');
    assert.equal(run('base64.decode(v)', 'a$', EXTRAS), 'error: illegal base64 data at input byte 1');
    assert.ok(run('[1, 2]', null, EXTRAS) instanceof ListV);
  });
});
