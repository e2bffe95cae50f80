// dig, as much of BIND's as the conformance suite's DNS probes use: `dig [@server]
// [-p port] [+tcp|+notcp] [+noall] [+answer] [+short] [+search] name [type]`, asking the
// resolvers of /etc/resolv.conf (with its search list and ndots under +search)
// and printing the answer section as dig does: `name. ttl IN TYPE data`. A name
// that does not exist prints no answer (status 0); no server answering prints
// dig's message and exits 9.
import { promises as dns } from 'node:dns';
import { readFileSync } from 'node:fs';

const TYPES = ['A', 'AAAA', 'SRV', 'PTR', 'CNAME', 'TXT', 'MX', 'NS'];

function resolvConf() {
  const conf = { servers: [], search: [], ndots: 1 };
  let text = '';
  try {
    text = readFileSync('/etc/resolv.conf', 'utf8');
  } catch {
    return conf;
  }
  for (const line of text.split('\n')) {
    const [key, ...vals] = line.trim().split(/\s+/);
    if (key === 'nameserver' && vals[0]) conf.servers.push(vals[0]);
    else if (key === 'search' || key === 'domain') conf.search = vals;
    else if (key === 'options') for (const o of vals) if (o.startsWith('ndots:')) conf.ndots = Number(o.slice(6)) || 1;
  }
  return conf;
}

const args = process.argv.slice(2);
const opts = { search: false, short: false };
let server;
let port = 53;
let name;
let type = 'A';
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a.startsWith('@')) server = a.slice(1);
  else if (a === '-p') port = Number(args[++i]);
  else if (a === '+search') opts.search = true;
  else if (a === '+short') opts.short = true;
  else if (a.startsWith('+')) continue;
  else if (name !== undefined && TYPES.includes(a.toUpperCase())) type = a.toUpperCase();
  else if (name === undefined) name = a;
}
if (!name) {
  process.stderr.write('usage: dig [@server] [-p port] [+tcp|+notcp] [+noall] [+answer] [+short] [+search] name [type]\n');
  process.exit(1);
}

const conf = resolvConf();
const resolver = new dns.Resolver({ timeout: 2000, tries: 2 });
const servers = server ? [server] : conf.servers;
if (servers.length) resolver.setServers(servers.map((s) => (s.includes(':') ? `[${s}]:${port}` : `${s}:${port}`)));

/** The names to try, in order: as written when it is absolute or has ndots dots, and with each search domain. */
function candidates(n) {
  if (n.endsWith('.') || !opts.search) return [n.replace(/\.$/, '')];
  const dots = n.split('.').length - 1;
  const searched = conf.search.map((d) => `${n}.${d}`);
  return dots >= conf.ndots ? [n, ...searched] : [...searched, n];
}

async function ask(n) {
  switch (type) {
    case 'A':
      return (await resolver.resolve4(n, { ttl: true })).map((r) => [r.ttl, r.address]);
    case 'AAAA':
      return (await resolver.resolve6(n, { ttl: true })).map((r) => [r.ttl, r.address]);
    case 'SRV':
      return (await resolver.resolveSrv(n)).map((r) => [30, `${r.priority} ${r.weight} ${r.port} ${r.name}.`]);
    case 'PTR':
      return (await resolver.resolvePtr(n)).map((r) => [30, `${r}.`]);
    case 'CNAME':
      return (await resolver.resolveCname(n)).map((r) => [30, `${r}.`]);
    case 'MX':
      return (await resolver.resolveMx(n)).map((r) => [30, `${r.priority} ${r.exchange}.`]);
    case 'NS':
      return (await resolver.resolveNs(n)).map((r) => [30, `${r}.`]);
    default:
      return (await resolver.resolveTxt(n)).map((r) => [30, `"${r.join('')}"`]);
  }
}

for (const n of candidates(name)) {
  try {
    const answers = await ask(n);
    for (const [ttl, data] of answers) process.stdout.write(opts.short ? `${data}\n` : `${n}.\t\t${ttl}\tIN\t${type}\t${data}\n`);
    if (answers.length) process.exit(0);
  } catch (e) {
    if (e.code === 'ETIMEOUT' || e.code === 'ECONNREFUSED') {
      process.stdout.write(';; connection timed out; no servers could be reached\n');
      process.exit(9);
    }
    // NXDOMAIN or no data: the next candidate, or no answer at all.
  }
}
