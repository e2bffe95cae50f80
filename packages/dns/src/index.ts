export { DnsServer, type DnsServerOptions } from './server.js';
export { informerSource } from './source.js';
export { canonicalIPv6, dashed, reverseAddress, undashed, Zone, SPEC_VERSION, type Answer, type Record, type ZoneOptions, type ZoneSource } from './zone.js';
export { hostUpstreams } from './upstreams.js';
export { startStubResolver, type StubResolver } from './stub-resolver.js';
export { startZoneServer, type ZoneServer } from './zone-server.js';
