/**
 * What only the Netlify Blobs backend does: its record layout (hashes, never
 * a key, a token or an address), records that are not ours, access from the
 * environment, the fallback to eventual reads, and the edge function's key
 * check through the key cache (default 1 s). The behaviour and race suite it shares with SQLite is in
 * key-stores.test.ts.
 */
import { portalFront } from '../helpers/servers.ts';
import { getStore } from '@netlify/blobs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRACE_PERIODS, Keys } from '../../src/keys/rules.ts';
import { hashSecret } from '../../src/keys/secrets.ts';
import {
  blobsKeyStore,
  BlobsRecordError,
  EDGE_CACHE_TTL_MS,
  edgeKeyStore,
  KEY_STORE_NAME,
  portalKeys,
  type BlobsKeyStoreOptions,
} from '../../adapters/_netlify/blobs-keys.ts';
import { startBlobs, type Blobs } from '../helpers/blobs.ts';

let blobs: Blobs;
let storeCount = 0;

beforeAll(async () => {
  blobs = await startBlobs('keys-blobs');
});
afterAll(() => blobs?.stop());

/** A fresh store per test, so tests do not see each other's records. */
const fresh = (): BlobsKeyStoreOptions & { name: string } => ({
  ...blobs.access,
  name: `${KEY_STORE_NAME}-${++storeCount}`,
});

describe('the Blobs key backend', () => {
  it('names every record by a hash and stores no key, token, session or address', async () => {
    const options = fresh();
    const keys = portalKeys(options);
    const { token } = await keys.signIn('Blob@Example.org');
    const { session } = await keys.openSession(token);
    const key = await keys.issue('blob@example.org');
    const raw = getStore(options);
    const { blobs: listed } = await raw.list();
    const names = listed.map((b) => b.key).sort();
    expect(names).toEqual(
      [
        `accounts/${hashSecret('blob@example.org')}`,
        `keys/${hashSecret(key)}`,
        `sessions/${hashSecret(session)}`,
        `sign-ins/${hashSecret('blob@example.org')}`,
        `tokens/${hashSecret(token)}`,
      ].sort(),
    );
    for (const name of names) {
      const text = (await raw.get(name, { type: 'text' }))!;
      for (const secret of [key, token, session]) expect(text).not.toContain(secret.slice(4));
    }
    expect(JSON.parse((await raw.get(`keys/${hashSecret(key)}`, { type: 'text' }))!)).toMatchObject({
      id: key.slice(0, 12),
      revokedAt: null,
    });
  });

  it('answers no for a key it never issued, and an error, never a no, for a key whose record cannot be read', async () => {
    const options = fresh();
    const keys = portalKeys(options);
    const key = await keys.issue('broken@example.org');
    await getStore(options).set(`keys/${hashSecret(key)}`, 'not json');
    await expect(keys.verify(key)).rejects.toThrow(BlobsRecordError);
    expect(await keys.verify(`faa_${'A'.repeat(32)}`)).toBe(false);
  });

  it('treats an unreadable account record as an error: no second key is issued, nothing is written over it, and the portal answers 503', async () => {
    const options = fresh();
    const keys = portalKeys(options);
    const email = 'damaged@example.org';
    const old = await keys.issue(email);
    const { session } = await keys.openSession((await keys.signIn(email)).token);
    const raw = getStore(options);
    const account = `accounts/${hashSecret(email)}`;
    for (const broken of ['{"email": "damaged@exa', '[]', 'null']) {
      await raw.set(account, broken);
      await expect(keys.issue(email)).rejects.toThrow(
        /^The key store's record accounts\/[0-9a-f]{64} cannot be read .*; it was left as it is$/,
      );
      await expect(keys.rotate(email).then((r) => r.key)).rejects.toThrow(BlobsRecordError);
      await expect(keys.revoke(email)).rejects.toThrow(BlobsRecordError);
      await expect(keys.activeKey(email)).rejects.toThrow(BlobsRecordError);
      expect(await raw.get(account, { type: 'text' })).toBe(broken);
    }
    // its own record is whole: the key it had still works, and no other was made
    expect(await keys.verify(old)).toBe(true);
    const { blobs: listed } = await raw.list({ prefix: 'keys/' });
    expect(listed).toHaveLength(1);

    const portal = portalFront({ keys, sendMail: async () => {}, publicBaseUrl: 'https://api.example.org' });
    const issued = await portal.handle(
      new Request('https://api.example.org/portal/keys', {
        method: 'POST',
        headers: { authorization: `Bearer ${session}` },
      }),
      '203.0.113.5',
    );
    expect(issued.status).toBe(503);
    expect(issued.headers.get('retry-after')).toBe('60');
    expect(await raw.get(account, { type: 'text' })).toBe('null');
  });

  it('treats an account record of the wrong shape as an error, never as "no key": no second key, nothing written over it', async () => {
    const options = fresh();
    const keys = portalKeys(options);
    const email = 'shape@example.org';
    const old = await keys.issue(email);
    const raw = getStore(options);
    const account = `accounts/${hashSecret(email)}`;
    const whole = JSON.parse((await raw.get(account, { type: 'text' }))!);
    const shapes = [
      '{}',
      '{"active": null}',
      '{"active": "x"}',
      JSON.stringify({ email, active: 'x' }),
      JSON.stringify({ email, active: { ...whole.active, hash: 'x' } }),
      JSON.stringify({ email, active: { ...whole.active, id: 5 } }),
      JSON.stringify({ email, active: { ...whole.active, createdAt: 'yesterday' } }),
      JSON.stringify({ active: whole.active }),
      JSON.stringify({ email, active: whole.active, rev: 'r' }).replace('"active"', '"activ"'),
    ];
    for (const broken of shapes) {
      await raw.set(account, broken);
      await expect(keys.issue(email), broken).rejects.toThrow(
        /^The key store's record accounts\/[0-9a-f]{64} cannot be read .*; it was left as it is$/,
      );
      await expect(
        keys.rotate(email).then((r) => r.key),
        broken,
      ).rejects.toThrow(BlobsRecordError);
      await expect(keys.revoke(email), broken).rejects.toThrow(BlobsRecordError);
      await expect(keys.activeKey(email), broken).rejects.toThrow(BlobsRecordError);
      expect(await raw.get(account, { type: 'text' })).toBe(broken);
    }
    expect(await keys.verify(old)).toBe(true);
    const { blobs: listed } = await raw.list({ prefix: 'keys/' });
    expect(listed).toHaveLength(1);
    // The record as the store writes it is read as it was: the key is found, revoked, and a new one issued.
    await raw.set(account, JSON.stringify(whole));
    expect((await keys.activeKey(email))?.id).toBe(old.slice(0, 12));
    await keys.revoke(email);
    expect(await keys.activeKey(email)).toBeNull();
    expect(await keys.verify(old)).toBe(false);
    expect(await keys.issue(email)).toMatch(/^faa_/);
  });

  it('falls back to eventual reads where the environment offers no strong ones', async () => {
    const { uncachedEdgeURL: _, ...withoutUncached } = fresh();
    const backend = blobsKeyStore(withoutUncached);
    const keys = new Keys(backend);
    const key = await keys.issue('fallback@example.org');
    expect(await keys.verify(key)).toBe(true);
    expect(backend.degraded).toBe(true);
    expect(blobsKeyStore(fresh()).degraded).toBe(false);
  });

  it('asks the environment for Blobs access only when first used', async () => {
    const backend = blobsKeyStore(); // no NETLIFY_BLOBS_CONTEXT here: constructing must not throw
    await expect(backend.activeKey('x@example.org')).rejects.toThrow(/siteID|token|environment/i);
  });
});

describe("the edge function's key check", () => {
  it('answers synchronously while its cache holds the key, and sees a revocation once the entry is older than the TTL', async () => {
    const options = fresh();
    // The edge's clock starts at the portal's: a revocation is stamped
    // with the revoker's time and compared with the checker's.
    let t = Date.now();
    const edge = edgeKeyStore({ ...options, now: () => t });
    const portal = portalKeys(options); // another instance: the portal function
    const key = await portal.issue('edge@example.org');

    const cold = edge.verify(key);
    expect(cold).toBeInstanceOf(Promise);
    expect(await cold).toBe(true);
    expect(edge.verify(key)).toBe(true); // warm: a plain boolean, no promise
    await portal.revoke('edge@example.org');
    t += EDGE_CACHE_TTL_MS - 1;
    expect(edge.verify(key)).toBe(true); // still cached: the bound is the TTL, not zero
    t += 1;
    expect(await edge.verify(key)).toBe(false);
    expect(EDGE_CACHE_TTL_MS).toBeLessThanOrEqual(1_000);
  });

  it('never keeps a yes past a key’s end: a key in its grace period is refused at its end though its answer is still cached', async () => {
    const options = fresh();
    let t = Date.now();
    const edge = edgeKeyStore({ ...options, now: () => t, ttlMs: 2_000 });
    const portal = new Keys(blobsKeyStore(options), () => t);
    const old = await portal.issue('grace-edge@example.org');
    const next = await portal.rotate('grace-edge@example.org', GRACE_PERIODS['1h']).then((r) => r.key);
    t += GRACE_PERIODS['1h'] - 500;
    expect(await edge.verify(old)).toBe(true); // read now, held for 2 s
    expect(edge.verify(old)).toBe(true); // from the cache
    expect(edge.until(old)).toBe(t + 500); // the end the gate caps caching at
    t += 500;
    expect(edge.verify(old)).toBe(false); // still cached, past its end: refused, synchronously
    expect(await edge.verify(next)).toBe(true);
    expect(edge.until(next)).toBe(Infinity);
  });

  it('refuses at once a key revoked through itself, whatever its cache held', async () => {
    const options = fresh();
    const edge = edgeKeyStore({ ...options, ttlMs: 2_000 });
    const key = await edge.issue('self@example.org');
    expect(await edge.verify(key)).toBe(true);
    await edge.revoke('self@example.org');
    expect(await edge.verify(key)).toBe(false);
  });

  it('sees a new key at once, since a key it never saw is read from the store', async () => {
    const options = fresh();
    const edge = edgeKeyStore(options);
    const portal = portalKeys(options);
    await portal.issue('new@example.org');
    const next = await portal.rotate('new@example.org').then((r) => r.key);
    expect(await edge.verify(next)).toBe(true);
  });

  it('gives many checks of one uncached key at once each its own read, then answers from memory', async () => {
    const options = fresh();
    const edge = edgeKeyStore(options);
    const key = await portalKeys(options).issue('burst@example.org');
    const answers = Array.from({ length: 8 }, () => edge.verify(key));
    // nothing in flight is shared between requests
    expect(new Set(answers.filter((a) => a instanceof Promise)).size).toBe(8);
    expect(await Promise.all(answers)).toEqual(new Array(8).fill(true));
    expect(edge.verify(key)).toBe(true);
  });

  it('refuses a cache TTL over 2 seconds: a revoked key must stop working within that', () => {
    expect(() => edgeKeyStore({ ...blobs.access, ttlMs: 2_001 })).toThrow(/ttlMs/);
  });
});
