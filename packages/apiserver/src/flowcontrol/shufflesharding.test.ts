/** Shuffle sharding: hands are distinct cards of the deck, fixed by the hash, spread over the deck. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Dealer, MAX_HASH_BITS, hashFlowID, requiredEntropyBits } from './shufflesharding.js';

test('deals are worked out from remainders of the hash, mapped onto the cards left', () => {
  const d = new Dealer(4, 2);
  // 0 → remainders [0, 0] → cards 0, then 1 (0 is taken).
  assert.deepEqual(d.deal(0n), [0, 1]);
  // 5 → 5 % 4 = 1, 1 % 3 = 1 → cards 1, then 2.
  assert.deepEqual(d.deal(5n), [1, 2]);
  // 7 → 7 % 4 = 3, 1 % 3 = 1 → cards 3, then 1.
  assert.deepEqual(d.deal(7n), [3, 1]);
});

test('a hand holds distinct cards of the deck, the same for the same hash', () => {
  const d = new Dealer(128, 6);
  const seen = new Set<number>();
  for (let i = 0; i < 2000; i++) {
    const hand = d.deal(hashFlowID('fs', `user-${i}`));
    assert.equal(hand.length, 6);
    assert.equal(new Set(hand).size, 6, `repeated card in ${hand}`);
    for (const c of hand) {
      assert.ok(c >= 0 && c < 128);
      seen.add(c);
    }
    assert.deepEqual(d.deal(hashFlowID('fs', `user-${i}`)), hand);
  }
  assert.equal(seen.size, 128, 'every queue is dealt to some flow');
});

test('two flows rarely share a whole hand', () => {
  const d = new Dealer(64, 8);
  const hands = Array.from({ length: 300 }, (_, i) => new Set(d.deal(hashFlowID('fs', `u${i}`))));
  let identical = 0;
  for (let i = 1; i < hands.length; i++) if ([...hands[i]!].every((c) => hands[0]!.has(c))) identical++;
  assert.equal(identical, 0);
});

test('the dealer refuses impossible or too entropy-hungry configurations', () => {
  assert.throws(() => new Dealer(0, 1), /not positive/);
  assert.throws(() => new Dealer(4, 5), /greater than deckSize/);
  assert.equal(requiredEntropyBits(128, 6), 42);
  assert.ok(requiredEntropyBits(1 << 20, 4) > MAX_HASH_BITS);
  assert.throws(() => new Dealer(1 << 20, 4), /entropy/);
});

test('the flow hash is the little-endian head of SHA-256 over schema NUL distinguisher', () => {
  const want = createHash('sha256').update('global-default\0alice').digest().readBigUInt64LE(0);
  assert.equal(hashFlowID('global-default', 'alice'), want);
  assert.notEqual(hashFlowID('a', 'bc'), hashFlowID('ab', 'c'));
});
