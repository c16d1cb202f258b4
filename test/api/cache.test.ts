/**
 * What a shared cache may keep (src/http/cache.ts): answers to a good key
 * (200, 304, a lookup's 404) say so in the header the runtime's cache reads,
 * tagged by key id and revision; nothing else does. Revoke and rotate purge
 * the key's tag, on every runtime's portal, through a stand-in for the
 * platform's purge; a failed purge is retried and logged by id and never
 * fails the revoke. (A real Varnish: test/runtimes/varnish.test.ts.)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLOUDFLARE_CACHE, KEY_SETTLE_MS, keyTag, NETLIFY_CACHE, purgeKey, type SharedCache, VARNISH_CACHE } from '../../src/http/cache.ts';
import { createApi } from '../../src/api/handler.ts';
import { keyId, Keys } from '../../src/keys/keys.ts';
import { DiskData } from '../../adapters/_node/disk-data.ts';
import { SqliteKeyBackend } from '../../src/keys/sqlite.node.ts';
import { SAMPLE_SOURCE } from '../helpers/paths.ts';
import { listen, type Running } from '../helpers/servers.ts';
import { buildInto } from '../helpers/temp.ts';

let dist: string;
beforeAll(async () => {
  dist = await buildInto(SAMPLE_SOURCE, 'cache');
}, 120_000);

/** A signed-in owner with a key, straight through the key store (no mail). */
async function owner(keys: Keys, email: string) {
  let token = '';
  await keys.signIn(email, async (_to, t) => void (token = t));
  const { session } = await keys.openSession(token);
  const key = await keys.issue(email);
  return { key, bearer: `Bearer ${session}` };
}

const portalPost = (base: string, p: string, bearer: string) => fetch(`${base}${p}`, { method: 'POST', headers: { authorization: bearer } });

describe.each([
  ['Netlify', NETLIFY_CACHE],
  ['Cloudflare', CLOUDFLARE_CACHE],
  ['Varnish', VARNISH_CACHE],
] as [string, SharedCache][])('what %s may keep', (_name, cache) => {
  const keys = new Keys(new SqliteKeyBackend(':memory:'));
  let key = '';
  let api: ReturnType<typeof createApi>;
  beforeAll(async () => {
    key = await keys.issue('headers@example.org');
    api = createApi({ keys, data: new DiskData(dist), rateLimitPerMinute: 4, sharedCache: cache });
  });
  const get = (p: string, headers: Record<string, string> = {}) => api.handle(new Request(`https://api.example.org${p}`, { headers }));
  const tagsOf = (r: Response) => r.headers.get(cache.tags)?.split(cache.separator) ?? null;

  it('marks a 200, its 304 and a lookup 404 for the shared cache, tagged by key id and revision; browsers keep their policy', async () => {
    const ok = await get(`/person/name=Emil%20Jannings/apikey=${key}`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('cache-control')).toBe('private, max-age=86400');
    expect(ok.headers.get(cache.control)).toBe('public, max-age=31536000');
    const tags = tagsOf(ok)!;
    expect(tags).toContain(keyTag(keyId(key)));
    expect(tags.some((t) => /^rev-[0-9a-f]{16}$/.test(t))).toBe(true);
    expect(ok.headers.get(cache.tags)).not.toContain(key); // the id, never the key
    const again = await get(`/person/name=Emil%20Jannings/apikey=${key}`, { 'if-none-match': ok.headers.get('etag')! });
    expect(again.status).toBe(304);
    expect(tagsOf(again)).toEqual(tags);
    const missing = await get(`/person/name=Nobody%20At%20All/apikey=${key}`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('cache-control')).toBe('no-store');
    expect(tagsOf(missing)).toEqual(tags);
  });

  it('never marks a 403, 429, 400, 405, /health, the portal or a public file', async () => {
    const refused = [
      await get(`/person/name=Emil%20Jannings/apikey=faa_${'x'.repeat(32)}`),
      await get('/person/name=Emil%20Jannings/apikey='),
      await get(`/ceremony/year=abc/apikey=${key}`),
      await api.handle(new Request(`https://api.example.org/person/name=A/apikey=${key}`, { method: 'POST' })),
      await get('/health'),
      await get('/portal/keys'),
      await get('/openapi.json'),
    ];
    let limited: Response | undefined;
    for (let i = 0; i < 6 && !limited; i++) {
      const r = await get(`/person/name=Emil%20Jannings/apikey=${key}`);
      if (r.status === 429) limited = r;
    }
    expect(limited?.status).toBe(429);
    for (const r of [...refused, limited!]) {
      expect(r.headers.get(cache.control), `${r.status}`).toBeNull();
      expect(r.headers.get(cache.tags), `${r.status}`).toBeNull();
    }
  });
});

describe('revoke and rotate purge the key’s tag', () => {
  const purges: string[][] = [];
  let hook: http.Server;
  let hookUrl = '';
  let failing = 0;
  let running: Running;
  const keys = new Keys(new SqliteKeyBackend(':memory:'));
  const logged: string[] = [];

  beforeAll(async () => {
    // A stand-in for Varnish's PURGE: records the tags; fails the next `failing` calls.
    hook = http.createServer((req, res) => {
      purges.push([req.method!, String(req.headers['xkey-purge'])]);
      res.writeHead(failing > 0 ? (failing--, 503) : 200).end();
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/`;
    running = await listen({ dist: path.resolve(dist), keys, cachePurgeUrl: hookUrl, log: (line) => logged.push(line), portal: { sendMail: async () => {} } });
  });
  afterAll(async () => {
    await running?.close();
    await new Promise((resolve) => hook?.close(resolve));
  });
  const base = () => `http://127.0.0.1:${running.port}`;
  const purgedFor = (key: string) => purges.filter(([m, tags]) => m === 'PURGE' && tags === keyTag(keyId(key))).length;

  it('purges every answer on start, through the hook', async () => {
    await expect.poll(() => purges.some(([m, t]) => m === 'PURGE' && t === 'answers'), { timeout: 3000 }).toBe(true);
  });

  it('revoke through the portal purges the key’s tag, now and once key caches have settled', async () => {
    const { key, bearer } = await owner(keys, 'revoke@example.org');
    expect((await fetch(`${base()}/person/name=Emil%20Jannings/apikey=${key}`)).headers.get('xkey')).toContain(keyTag(keyId(key)));
    expect((await portalPost(base(), '/portal/keys/revoke', bearer)).status).toBe(200);
    expect(purgedFor(key)).toBe(1);
    await expect.poll(() => purgedFor(key), { timeout: KEY_SETTLE_MS + 3000 }).toBe(2);
  });

  it('rotate through the portal purges the old key’s tag, not the new one’s', async () => {
    const { key, bearer } = await owner(keys, 'rotate@example.org');
    const rotated = await portalPost(base(), '/portal/keys/rotate', bearer);
    expect(rotated.status).toBe(200);
    const { apiKey } = (await rotated.json()) as { apiKey: string };
    expect(purgedFor(key)).toBe(1);
    expect(purgedFor(apiKey)).toBe(0);
  });

  it('a failed purge is retried and logged with the key’s id; the revoke stands', async () => {
    const { key, bearer } = await owner(keys, 'failing@example.org');
    failing = 2;
    expect((await portalPost(base(), '/portal/keys/revoke', bearer)).status).toBe(200);
    expect(keys.verify(key)).toBe(false);
    expect(purgedFor(key)).toBe(3); // two refusals, then confirmed
    expect(logged.filter((l) => l.includes(`key ${keyId(key)}`) && l.includes('failed'))).toHaveLength(2);
    expect(logged.join('\n')).not.toContain(key);
  });

  it('a purge that never succeeds gives up without rejecting', async () => {
    const lines: string[] = [];
    let calls = 0;
    const down = async () => {
      calls++;
      throw new Error('down');
    };
    await purgeKey(down, 'faa_abcdefgh', (l) => lines.push(l), () => {});
    expect(calls).toBe(3);
    expect(lines.at(-1)).toContain('key faa_abcdefgh… gave up');
  });
});
