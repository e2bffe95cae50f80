/**
 * Shuffle sharding (k8s.io/apiserver pkg/util/shufflesharding): a flow's hash
 * picks a "hand" of `handSize` distinct queues out of a deck of `deckSize`, so
 * that two flows rarely share all their queues. The hash of a flow is the first
 * eight bytes (little-endian) of SHA-256 over `<flow schema>\0<distinguisher>`,
 * as upstream's hashFlowID. Arithmetic is on 64-bit unsigned values (bigint).
 */
import { createHash } from 'node:crypto';

/** At most this many bits of the hash are consumed: the last card stays nearly uniform. */
export const MAX_HASH_BITS = 60;

/** Bits of hash a deal consumes, rounded up (meaningful for 1 <= handSize <= deckSize <= 2^26). */
export const requiredEntropyBits = (deckSize: number, handSize: number): number => Math.ceil(Math.log2(deckSize) * handSize);

export class Dealer {
  constructor(
    readonly deckSize: number,
    readonly handSize: number,
  ) {
    if (deckSize <= 0 || handSize <= 0) throw new Error(`deckSize ${deckSize} or handSize ${handSize} is not positive`);
    if (handSize > deckSize) throw new Error(`handSize ${handSize} is greater than deckSize ${deckSize}`);
    if (deckSize > 1 << 26) throw new Error(`deckSize ${deckSize} is impractically large`);
    if (requiredEntropyBits(deckSize, handSize) > MAX_HASH_BITS) {
      throw new Error(`required entropy bits of deckSize ${deckSize} and handSize ${handSize} is greater than ${MAX_HASH_BITS}`);
    }
  }

  /**
   * The hand for `hash`: `handSize` distinct cards in [0, deckSize). Each step
   * takes a remainder modulo the shrinking deck, then the remainders are mapped
   * onto the cards not dealt yet.
   */
  deal(hash: bigint): number[] {
    const remainders: number[] = [];
    let h = BigInt.asUintN(64, hash);
    for (let i = 0; i < this.handSize; i++) {
      const size = BigInt(this.deckSize - i);
      remainders.push(Number(h % size));
      h /= size;
    }
    const hand: number[] = [];
    for (let i = 0; i < this.handSize; i++) {
      let card = remainders[i]!;
      for (let j = i; j > 0; j--) if (card >= remainders[j - 1]!) card++;
      hand.push(card);
    }
    return hand;
  }
}

/** The 64-bit hash of the flow (flow schema name, flow distinguisher). */
export function hashFlowID(flowSchema: string, distinguisher: string): bigint {
  const sum = createHash('sha256')
    .update(flowSchema)
    .update(Buffer.from([0]))
    .update(distinguisher)
    .digest();
  return sum.readBigUInt64LE(0);
}
