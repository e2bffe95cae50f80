// nslookup as busybox's prints it: `nslookup [-type=T] name [server]`, asking the
// resolvers of /etc/resolv.conf with its search list and ndots (as the C library
// does), A and AAAA by default. Prints the server, then each name's addresses;
// a name that does not resolve prints "** server can't find" and exits 1.
import { promises as dns } from 'node:dns';
import { readFileSync } from 'node:fs';

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
let type;
const rest = [];
for (const a of args) {
  const m = /^-(?:type|query|q)=(\w+)$/i.exec(a);
  if (m) type = m[1].toUpperCase();
  else if (!a.startsWith('-')) rest.push(a);
}
const [name, server] = rest;
if (!name) {
  process.stderr.write('Usage: nslookup [-type=QUERY_TYPE] HOST [DNS_SERVER]\n');
  process.exit(1);
}

const conf = resolvConf();
// A server is an address, or (beyond busybox) `address:port` / `[v6]:port`.
const withPort = (s) => (/^\[.*\]:\d+$/.test(s) || /^[^:]+:\d+$/.test(s) ? s : s.includes(':') ? `[${s}]:53` : `${s}:53`);
const servers = (server ? [server] : conf.servers.length ? conf.servers : ['127.0.0.1']).map(withPort);
const resolver = new dns.Resolver({ timeout: 2000, tries: 2 });
resolver.setServers(servers);
process.stdout.write(`Server:\t\t${servers[0].replace(/:\d+$/, '').replace(/^\[|\]$/g, '')}\nAddress:\t${servers[0]}\n\n`);

/** The names to try, in order: as written when it is absolute or has ndots dots, and with each search domain. */
function candidates(n) {
  if (n.endsWith('.')) return [n.slice(0, -1)];
  const dots = n.split('.').length - 1;
  const searched = conf.search.map((d) => `${n}.${d}`);
  return dots >= conf.ndots ? [n, ...searched] : [...searched, n];
}

async function ask(n) {
  const out = [];
  const kinds = type ? [type] : ['A', 'AAAA'];
  for (const k of kinds) {
    try {
      if (k === 'A') for (const a of await resolver.resolve4(n)) out.push(`Name:\t${n}\nAddress: ${a}\n`);
      else if (k === 'AAAA') for (const a of await resolver.resolve6(n)) out.push(`Name:\t${n}\nAddress: ${a}\n`);
      else if (k === 'CNAME') for (const c of await resolver.resolveCname(n)) out.push(`${n}\tcanonical name = ${c}\n`);
      else if (k === 'SRV') for (const r of await resolver.resolveSrv(n)) out.push(`${n}\tservice = ${r.priority} ${r.weight} ${r.port} ${r.name}\n`);
      else if (k === 'PTR') for (const p of await resolver.resolvePtr(n)) out.push(`${n}\tname = ${p}\n`);
      else if (k === 'TXT') for (const t of await resolver.resolveTxt(n)) out.push(`${n}\ttext = "${t.join('')}"\n`);
    } catch (e) {
      if (e.code === 'ETIMEOUT' || e.code === 'ECONNREFUSED') throw e;
      // NXDOMAIN or no data of this type.
    }
  }
  return out;
}

try {
  for (const n of candidates(name)) {
    const answers = await ask(n);
    if (answers.length) {
      process.stdout.write(`${answers.join('\n')}\n`);
      process.exit(0);
    }
  }
  process.stdout.write(`** server can't find ${name}: NXDOMAIN\n\n`);
} catch {
  process.stdout.write(';; connection timed out; no servers could be reached\n\n');
}
process.exit(1);
