/**
 * The key cache (src/keys/cache.ts) over a store whose reads we hold in our
 * hands: nothing in flight is shared between checks (workerd ties a read to
 * the request that made it), yet a busy key costs one read per TTL, a revoked
 * key is never taken from an answer past the 2 s bound, and a drop wins over
 * a read in flight.
 */
import { describe, expect, it } from 'vitest';
import { KEY_CACHE_MAX_TTL_MS, KeyCache } from '../../src/keys/cache.ts';
import type { KeyEnd } from '../../src/keys/contract.ts';
import { Keys } from '../../src/keys/rules.ts';
import { generateKey, hashSecret } from '../../src/keys/secrets.ts';
import { isPromise } from '../../src/shared/maybe.ts';

/** A store whose reads wait until the test answers them: each read's hash and its answer. */
function heldStore() {
  const reads: { hash: string; answer(end: KeyEnd): void; fail(error: Error): void }[] = [];
  const read = (hash: string) =>
    new Promise<KeyEnd>((resolve, reject) => {
      reads.push({ hash, answer: resolve, fail: reject });
    });
  return { reads, read };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/** A cache with a 1 s lifetime on a clock of its own, holding a current key's answer read once at time 0. */
async function answeredOnce() {
  const clock = { t: 0 };
  const cache = new KeyCache({ ttlMs: 1_000, now: () => clock.t });
  const store = heldStore();
  const first = cache.keyEnd('h', store.read);
  store.reads[0].answer(null);
  await first;
  return { clock, cache, store };
}

describe('the key cache', () => {
  it('gives each check of an uncached key its own read, never a promise another check holds', async () => {
    const clock = { t: 0 };
    const cache = new KeyCache({ now: () => clock.t });
    const store = heldStore();
    const checks = Array.from({ length: 8 }, () => cache.keyEnd('h', store.read));
    expect(checks.every(isPromise)).toBe(true);
    expect(new Set(checks).size).toBe(8);
    expect(store.reads.length).toBe(8);
    for (const read of store.reads) read.answer(null);
    expect(await Promise.all(checks)).toEqual(new Array(8).fill(null));
    expect(cache.keyEnd('h', store.read)).toBe(null); // settled: held, answered at once
    expect(store.reads.length).toBe(8);
  });

  it('reads an expired answer again once, while the other checks keep it until that read lands', async () => {
    const { clock, cache, store } = await answeredOnce();
    clock.t = 1_200;
    const refreshing = cache.keyEnd('h', store.read);
    expect(isPromise(refreshing)).toBe(true);
    const others = Array.from({ length: 20 }, () => cache.keyEnd('h', store.read));
    expect(others).toEqual(new Array(20).fill(null)); // answered at once from the held answer
    expect(store.reads.length).toBe(2);
    store.reads[1].answer(5_000); // revoked meanwhile, ends at 5 s
    expect(await refreshing).toBe(5_000);
    expect(cache.keyEnd('h', store.read)).toBe(5_000);
  });

  it('never gives an answer later than 2 s after it was read, even while a read of it hangs', async () => {
    const { clock, cache, store } = await answeredOnce();
    clock.t = 1_500;
    void cache.keyEnd('h', store.read); // this read never lands
    expect(cache.keyEnd('h', store.read)).toBe(null);
    clock.t = KEY_CACHE_MAX_TTL_MS;
    expect(isPromise(cache.keyEnd('h', store.read))).toBe(true);
    expect(store.reads.length).toBe(3);
  });

  it('lets the next check read again when a read fails', async () => {
    const { clock, cache, store } = await answeredOnce();
    clock.t = 1_100;
    const failing = cache.keyEnd('h', store.read) as Promise<KeyEnd>;
    store.reads[1].fail(new Error('store down'));
    await expect(failing).rejects.toThrow('store down');
    expect(isPromise(cache.keyEnd('h', store.read))).toBe(true);
    expect(store.reads.length).toBe(3);
  });

  it('does not keep a read that was in flight when the key was dropped', async () => {
    const cache = new KeyCache();
    const store = heldStore();
    const inFlight = cache.keyEnd('h', store.read);
    cache.drop('h');
    store.reads[0].answer(null);
    expect(await inFlight).toBe(null);
    await tick();
    expect(isPromise(cache.keyEnd('h', store.read))).toBe(true);
  });

  it('under Keys, gives each waiting check its own promise too', async () => {
    const store = heldStore();
    const keys = new Keys({ keyEnd: store.read } as never, Date.now, { ttlMs: 1_000 });
    const key = generateKey();
    const checks = Array.from({ length: 4 }, () => keys.verify(key));
    expect(new Set(checks).size).toBe(4);
    for (const read of store.reads) {
      expect(read.hash).toBe(hashSecret(key));
      read.answer(null);
    }
    expect(await Promise.all(checks)).toEqual([true, true, true, true]);
  });
});
