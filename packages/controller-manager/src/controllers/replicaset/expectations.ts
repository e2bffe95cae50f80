/**
 * Controller expectations (kubernetes pkg/controller/controller_utils.go): how
 * many pod creations and which pod deletions a controller still waits to see
 * through its informer. A key is synced again only when nothing is pending, or
 * when the expectations are older than the TTL (a lost event must not wedge it).
 */
const TTL_MS = 5 * 60_000;

interface Pending {
  adds: number;
  dels: Set<string>;
  at: number;
}

export class Expectations {
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly now: () => number = Date.now) {}

  satisfied(key: string): boolean {
    const p = this.pending.get(key);
    if (!p) return true;
    if ((p.adds <= 0 && p.dels.size === 0) || this.now() - p.at > TTL_MS) {
      this.pending.delete(key);
      return true;
    }
    return false;
  }

  expectCreations(key: string, n: number): void {
    const p = this.pending.get(key) ?? { adds: 0, dels: new Set<string>(), at: this.now() };
    p.adds += n;
    p.at = this.now();
    this.pending.set(key, p);
  }

  expectDeletions(key: string, podKeys: string[]): void {
    const p = this.pending.get(key) ?? { adds: 0, dels: new Set<string>(), at: this.now() };
    for (const k of podKeys) p.dels.add(k);
    p.at = this.now();
    this.pending.set(key, p);
  }

  creationObserved(key: string): void {
    const p = this.pending.get(key);
    if (p && p.adds > 0) p.adds--;
  }

  deletionObserved(key: string, podKey: string): void {
    this.pending.get(key)?.dels.delete(podKey);
  }

  delete(key: string): void {
    this.pending.delete(key);
  }
}
