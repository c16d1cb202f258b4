import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { getStore } from '@netlify/blobs';
import { BlobsServer } from '@netlify/blobs/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyId, Keys } from '../src/keys.ts';
import { blobsKeyStore, BlobsKeyBackend, EDGE_CACHE_TTL_MS, edgeKeyStore, KEY_STORE_NAME, portalKeys, type BlobsKeyStoreOptions } from '../src/keys-blobs.ts';
import { createPortal } from '../src/portal.ts';

const TOKEN = 'test-token';
const SITE_ID = 'test-site';
let dir: string;
let server: BlobsServer;
let access: BlobsKeyStoreOptions;
let storeCount = 0;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'faa-blobs-'));
  server = new BlobsServer({ directory: dir, token: TOKEN });
  const { port } = await server.start();
  const url = `http://127.0.0.1:${port}`;
  access = { siteID: SITE_ID, token: TOKEN, edgeURL: url, uncachedEdgeURL: url };
});

afterAll(async () => {
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** A fresh store per test, so tests do not see each other's keys. */
const fresh = (): BlobsKeyStoreOptions => ({ ...access, name: `${KEY_STORE_NAME}-${++storeCount}` });

describe('the Blobs key backend', () => {
  it('stores one JSON record per key, named by the key id, with the hash and never the key', async () => {
    const options = fresh();
    const keys = new Keys(blobsKeyStore(options));
    const key = await keys.issue('blob@example.org');
    const raw = getStore({ ...options, name: options.name! });
    const { blobs } = await raw.list();
    expect(blobs.map((b) => b.key)).toEqual([keyId(key)]);
    const text = await raw.get(keyId(key), { type: 'text' });
    expect(text).not.toContain(key);
    expect(JSON.parse(text!)).toMatchObject({ id: keyId(key), email: 'blob@example.org', hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it('reads back what it wrote, and null for an id it never saw', async () => {
    const backend = blobsKeyStore(fresh());
    const record = { id: 'faa_abcdefgh', hash: 'a'.repeat(64), email: 'x@example.org', created: '2026-01-01T00:00:00.000Z' };
    await backend.put(record);
    expect(await backend.get(record.id)).toEqual(record);
    expect(await backend.get('faa_zzzzzzzz')).toBeNull();
  });

  it('answers null for ids that could name another path, without asking the store', async () => {
    const asked: string[] = [];
    const backend = new BlobsKeyBackend({
      get: (async (id: string) => (asked.push(id), null)) as never,
      setJSON: (async () => ({ modified: true })) as never,
      list: (async () => ({ blobs: [], directories: [] })) as never,
    });
    for (const id of ['../x', 'a/b', '', '%2Fx', 'faa_ab cd']) expect(await backend.get(id)).toBeNull();
    expect(asked).toEqual([]);
  });

  it('treats a record that is not a key record as missing', async () => {
    const options = fresh();
    const raw = getStore({ ...options, name: options.name! });
    await raw.set('faa_broken01', 'not json');
    await raw.setJSON('faa_broken02', { id: 'faa_someone', hash: 'x', email: 'x', created: 'x' });
    const backend = blobsKeyStore(options);
    expect(await backend.get('faa_broken01')).toBeNull();
    expect(await backend.get('faa_broken02')).toBeNull();
    expect(await backend.all()).toEqual([]);
  });

  it('lists every record through store.list()', async () => {
    const keys = new Keys(blobsKeyStore(fresh()));
    for (let i = 0; i < 40; i++) await keys.issue(`user${i}@example.org`);
    const listed = await keys.list();
    expect(listed).toHaveLength(40);
    expect(new Set(listed.map((r) => r.email)).size).toBe(40);
    expect(listed.every((r) => !('hash' in r))).toBe(true);
  });

  it('backs the whole key life: issue, one key per address, rotate, revoke', async () => {
    const keys = portalKeys(fresh());
    const key = await keys.issue('life@example.org');
    expect(await keys.verify(key)).toBe(true);
    await expect(keys.issue('LIFE@example.org')).rejects.toMatchObject({ status: 409 });
    const next = await keys.rotate(key);
    expect(await keys.verify(key)).toBe(false);
    expect(await keys.verify(next)).toBe(true);
    await keys.revoke(next);
    expect(await keys.verify(next)).toBe(false);
    expect(await keys.issue('life@example.org')).toMatch(/^faa_/);
  });

  it('serves the portal end to end', async () => {
    const portal = createPortal({ keys: portalKeys(fresh()) });
    const post = (p: string, body: unknown) =>
      portal.handle(new Request(`https://x.example${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }), '192.0.2.1');
    const issued = await post('/portal/keys', { email: 'portal@example.org' });
    expect(issued.status).toBe(201);
    const { apiKey } = await issued.json();
    expect((await post('/portal/keys', { email: 'portal@example.org' })).status).toBe(409);
    expect((await post('/portal/keys/revoke', { apiKey })).status).toBe(200);
    expect((await post('/portal/keys/rotate', { apiKey })).status).toBe(403);
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
    await expect(backend.get('faa_abcdefgh')).rejects.toThrow(/siteID|token|environment/i);
  });
});

describe("the edge function's key check", () => {
  it('sees a revocation made elsewhere once its cache entry is older than the TTL', async () => {
    const options = fresh();
    let t = 5_000_000;
    const edge = edgeKeyStore({ ...options, now: () => t });
    const portal = portalKeys(options); // another instance: the portal function
    const key = await portal.issue('edge@example.org');

    expect(await edge.verify(key)).toBe(true);
    await portal.revoke(key);
    t += EDGE_CACHE_TTL_MS - 1;
    expect(await edge.verify(key)).toBe(true); // still cached: the bound is the TTL, not zero
    t += 1;
    expect(await edge.verify(key)).toBe(false);
    expect(EDGE_CACHE_TTL_MS).toBeLessThanOrEqual(60_000);
  });

  it('sees a new key at once, since an unknown id is read again after the TTL too', async () => {
    const options = fresh();
    let t = 0;
    const edge = edgeKeyStore({ ...options, now: () => t });
    const portal = portalKeys(options);
    const key = await portal.issue('new@example.org');
    expect(await edge.verify(key)).toBe(true);
    const next = await portal.rotate(key);
    expect(await edge.verify(next)).toBe(true); // a different id, never cached
    t += EDGE_CACHE_TTL_MS;
    expect(await edge.verify(key)).toBe(false);
  });

  it('refuses a cache TTL over 60 seconds', () => {
    expect(() => edgeKeyStore({ ...access, ttlMs: 61_000 })).toThrow(/ttlMs/);
  });
});
