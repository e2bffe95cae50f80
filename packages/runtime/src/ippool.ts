/**
 * Pod IPs: addresses of the pod CIDR, which must lie inside 127.0.0.0/8 so
 * every pod IP is a local address of this machine. The network and the first
 * address are skipped, as is the broadcast address; allocation goes round
 * the range, so a released IP is not handed out again at once.
 */
import { CriError, GRPC_UNKNOWN } from '@kubeling/cri';

function ipToInt(ip: string): number {
  return ip.split('.').reduce((a, o) => a * 256 + Number(o), 0);
}
const intToIp = (n: number) => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');

export class IpPool {
  private readonly base: number;
  private readonly size: number;
  private readonly used = new Set<number>();
  private next = 2;

  constructor(cidr: string) {
    const [ip, bits] = cidr.split('/');
    const n = Number(bits);
    if (!ip || !(n >= 8 && n <= 30) || ipToInt(ip) >>> 24 !== 127) throw new Error(`pod CIDR ${cidr} must be a /8–/30 inside 127.0.0.0/8`);
    this.size = 2 ** (32 - n);
    this.base = ipToInt(ip) - (ipToInt(ip) % this.size);
  }

  allocate(): string {
    for (let i = 0; i < this.size - 3; i++) {
      const off = ((this.next - 2 + i) % (this.size - 3)) + 2;
      if (!this.used.has(off)) {
        this.used.add(off);
        this.next = off + 1;
        return intToIp(this.base + off);
      }
    }
    throw new CriError(GRPC_UNKNOWN, 'no pod IPs left in the pod CIDR');
  }

  release(ip: string): void {
    this.used.delete(ipToInt(ip) - this.base);
  }
}
