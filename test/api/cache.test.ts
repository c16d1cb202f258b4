/**
 * What a shared cache may keep, as the core decides it (src/http/cache.ts):
 * answers to a good key (200, 304, a lookup's 404) may be kept, tagged by key
 * id and revision; the portal and /health never; nothing else is said. Each
 * adapter names the headers (Varnish's here; Netlify's and Cloudflare's on
 * their dev servers, test/runtimes/cache-platforms.test.ts). Revoke and rotate purge
 * the key's tag, on every runtime's portal, through a stand-in for the
 * platform's purge; a failed purge is retried and logged by id and never
 * fails the revoke. (A real Varnish: test/runtimes/varnish.test.ts.)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  KEY_SETTLE_MS,
  keyTag,
  PURGE_TOTAL_MS,
  purgeKeys,
  purgeTags,
  type SharedHeaders,
  type SharedPolicy,
} from '../../src/http/cache.ts';
import { purgeHook, purgeUrlSetting, varnishHeaders } from '../../adapters/_node/varnish.ts';
import { createApi } from '../../src/api/handler.ts';
import { Keys } from '../../src/keys/rules.ts';
import { keyId } from '../../src/keys/secrets.ts';
import { DiskData } from '../../adapters/_node/disk-data.ts';
import { SqliteKeyBackend } from '../../src/keys/stores/sqlite.node.ts';
import { SAMPLE_SOURCE } from '../helpers/paths.ts';
import { listen, type Running } from '../helpers/servers.ts';
import { buildInto, tempDir } from '../helpers/temp.ts';
import { EXIT_PURGE_FAILED, keysCli } from '../../cli/keys.ts';

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

const portalPost = (base: string, p: string, bearer: string) =>
  fetch(`${base}${p}`, { method: 'POST', headers: { authorization: bearer } });

/**
 * An adapter that writes the policy the core gave a reply into one
 * header, as JSON: what the core decided, before any platform's names.
 */
const recording: SharedHeaders = (policy) => ({ 'x-shared': JSON.stringify(policy) });
const policyOf = (r: Response): SharedPolicy | null => JSON.parse(r.headers.get('x-shared') ?? 'null');

describe('what a shared cache may keep, as the core decides it', () => {
  const keys = new Keys(new SqliteKeyBackend(':memory:'));
  let key = '';
  let api: ReturnType<typeof createApi>;
  beforeAll(async () => {
    key = await keys.issue('headers@example.org');
    api = createApi({ keys, data: new DiskData(dist), rateLimitPerMinute: 4, sharedCache: recording });
  });
  const get = (p: string, headers: Record<string, string> = {}) =>
    api.handle(new Request(`https://api.example.org${p}`, { headers }));

  it('keeps a 200, its 304 and a lookup 404 a year, tagged by key id and revision; browsers keep their policy', async () => {
    const ok = await get(`/person/name=Emil%20Jannings/apikey=${key}`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('cache-control')).toBe('private, max-age=86400');
    const policy = policyOf(ok);
    expect(policy).toEqual({
      keep: true,
      maxAge: 31_536_000,
      tags: [keyTag(keyId(key)), expect.stringMatching(/^rev-[0-9a-f]{16}$/), 'answers'],
    });
    expect(ok.headers.get('x-shared')).not.toContain(key); // the id, never the key
    const again = await get(`/person/name=Emil%20Jannings/apikey=${key}`, { 'if-none-match': ok.headers.get('etag')! });
    expect(again.status).toBe(304);
    expect(policyOf(again)).toEqual(policy);
    const missing = await get(`/person/name=Nobody%20At%20All/apikey=${key}`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('cache-control')).toBe('no-store');
    expect(policyOf(missing)).toEqual(policy);
  });

  it('keeps a key’s answers in its grace period only for the seconds it has left', async () => {
    const old = await keys.issue('grace@example.org');
    await keys.rotate('grace@example.org', 3_600_000);
    const policy = policyOf(await get(`/person/name=Emil%20Jannings/apikey=${old}`));
    expect(policy?.keep && policy.maxAge).toBeGreaterThan(3_500);
    expect(policy?.keep && policy.maxAge).toBeLessThanOrEqual(3_600);
  });

  it('says nothing of a 403, 429, 400, 405 or a public file, and that /health and the portal are never kept', async () => {
    const unmarked = [
      await get(`/person/name=Emil%20Jannings/apikey=faa_${'x'.repeat(32)}`),
      await get('/person/name=Emil%20Jannings/apikey='),
      await get(`/ceremony/year=abc/apikey=${key}`),
      await api.handle(new Request(`https://api.example.org/person/name=A/apikey=${key}`, { method: 'POST' })),
      await get('/openapi.json'),
    ];
    let limited: Response | undefined;
    for (let i = 0; i < 6 && !limited; i++) {
      const r = await get(`/person/name=Emil%20Jannings/apikey=${key}`);
      if (r.status === 429) limited = r;
    }
    expect(limited?.status).toBe(429);
    for (const r of [...unmarked, limited!]) expect(policyOf(r), `${r.status}`).toBeNull();
    for (const p of ['/health', '/portal', '/portal/keys']) expect(policyOf(await get(p)), p).toEqual({ keep: false });
  });

  it('is said to Varnish in CDN-Cache-Control and xkey, and nothing when never kept (its VCL passes those paths)', () => {
    expect(
      varnishHeaders({ keep: true, maxAge: 60, tags: ['key-faa_abcdefgh', 'rev-0123456789abcdef', 'answers'] }),
    ).toEqual({ 'cdn-cache-control': 'public, max-age=60', xkey: 'key-faa_abcdefgh rev-0123456789abcdef answers' });
    expect(varnishHeaders({ keep: false })).toEqual({});
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
  const warned: string[] = [];

  beforeAll(async () => {
    // A stand-in for Varnish's PURGE: records the tags; fails the next `failing` calls.
    hook = http.createServer((req, res) => {
      purges.push([req.method!, String(req.headers['xkey-purge'])]);
      res.writeHead(failing > 0 ? (failing--, 503) : 200).end();
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/`;
    running = await listen({
      dist: path.resolve(dist),
      keys,
      cachePurgeUrl: hookUrl,
      log: Object.assign((line: string) => logged.push(line), { warn: (line: string) => warned.push(line) }),
      portal: { sendMail: async () => {} },
    });
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
    expect((await fetch(`${base()}/person/name=Emil%20Jannings/apikey=${key}`)).headers.get('xkey')).toContain(
      keyTag(keyId(key)),
    );
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

  it('a failed purge is retried and warned of with the key’s id, never logged as info; the revoke stands', async () => {
    const { key, bearer } = await owner(keys, 'failing@example.org');
    failing = 2;
    expect((await portalPost(base(), '/portal/keys/revoke', bearer)).status).toBe(200);
    expect(keys.verify(key)).toBe(false);
    expect(purgedFor(key)).toBe(3); // two refusals, then confirmed
    expect(warned.filter((l) => l.includes(`key ${keyId(key)}`) && l.includes('failed'))).toHaveLength(2);
    expect(logged.filter((l) => l.includes('purge'))).toEqual([]);
    expect([...warned, ...logged].join('\n')).not.toContain(key);
  });

  it('a purge that never succeeds gives up without rejecting', async () => {
    const lines: string[] = [];
    let calls = 0;
    const down = async () => {
      calls++;
      throw new Error('down');
    };
    expect(
      await purgeKeys(
        down,
        ['faa_abcdefgh'],
        (l) => lines.push(l),
        () => {},
      ),
    ).toBe(false);
    expect(calls).toBe(3); // and no second round after it gave up
    expect(lines.at(-1)).toContain('key faa_abcdefgh… gave up');
  });
});

describe('the purge hook (CACHE_PURGE_URL)', () => {
  /** A stand-in purge endpoint on loopback: `answer` decides each reply; every request is recorded. */
  async function endpoint(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
    const seen: http.IncomingMessage[] = [];
    const server = http.createServer((req, res) => {
      seen.push(req);
      answer(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    return {
      port,
      seen,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }

  it('never logs the URL’s password or a token in its query, and sends the credentials as Basic authentication', async () => {
    const hook = await endpoint((_req, res) => res.writeHead(503).end());
    const lines: string[] = [];
    try {
      const url = `http://purger:s3cret-Pa55word@127.0.0.1:${hook.port}/purge?token=tok_0123456789abcdefABCDEF&zone=main`;
      expect(await purgeTags(purgeHook(url), ['key-faa_abcdefgh'], 'key faa_abcdefgh…', (l) => lines.push(l))).toBe(
        false,
      );
      expect(lines.length).toBeGreaterThan(0);
      const said = lines.join('\n');
      expect(said).not.toContain('s3cret-Pa55word');
      expect(said).not.toContain('tok_0123456789abcdefABCDEF');
      expect(said).toContain('key faa_abcdefgh…');
      expect(said).toContain(`127.0.0.1:${hook.port}/purge`);
      expect(hook.seen[0]?.headers.authorization).toBe(
        `Basic ${Buffer.from('purger:s3cret-Pa55word').toString('base64')}`,
      );
      expect(hook.seen[0]?.url).toBe('/purge?token=tok_0123456789abcdefABCDEF&zone=main');
    } finally {
      await hook.close();
    }
  });

  it('follows no redirect: a 3xx is a failed purge, and the place it points to is never asked', async () => {
    const elsewhere = await endpoint((_req, res) => res.writeHead(200).end());
    const hook = await endpoint((_req, res) =>
      res.writeHead(307, { location: `http://127.0.0.1:${elsewhere.port}/` }).end(),
    );
    const lines: string[] = [];
    try {
      expect(
        await purgeTags(purgeHook(`http://127.0.0.1:${hook.port}/`), ['answers'], 'a start', (l) => lines.push(l)),
      ).toBe(false);
      expect(elsewhere.seen).toHaveLength(0);
      expect(hook.seen.length).toBeGreaterThan(0);
      expect(lines.at(-1)).toContain('gave up');
      expect(lines.join('\n')).toContain('307');
    } finally {
      await Promise.all([hook.close(), elsewhere.close()]);
    }
  });

  it('gives each attempt at most 2 s and all of them together at most 5 s against an endpoint that never answers', async () => {
    const hook = await endpoint(() => {}); // holds every request open
    const lines: string[] = [];
    try {
      const started = performance.now();
      expect(
        await purgeTags(purgeHook(`http://127.0.0.1:${hook.port}/`), ['answers'], 'a start', (l) => lines.push(l)),
      ).toBe(false);
      const took = performance.now() - started;
      expect(took).toBeLessThan(PURGE_TOTAL_MS + 500);
      expect(hook.seen.length).toBeGreaterThanOrEqual(2); // each attempt was cut off at its own bound, not the total's
      expect(lines.at(-1)).toContain('gave up');
    } finally {
      await hook.close();
    }
  }, 15_000);

  it('refuses a malformed URL with one line naming the setting, and never prints its password', () => {
    for (const bad of ['not a url', 'ftp://127.0.0.1/', 'http://user:hunter22@', '127.0.0.1:6081']) {
      let said = '';
      try {
        purgeUrlSetting(bad);
      } catch (error) {
        said = (error as Error).message;
      }
      expect(said, bad).toMatch(/^CACHE_PURGE_URL /);
      expect(said).not.toContain('\n');
      expect(said).not.toContain('hunter22');
    }
    expect(purgeUrlSetting('http://127.0.0.1:6081/')).toBe('http://127.0.0.1:6081/');
  });
});

describe('npm run keys and its purge', () => {
  let hook: http.Server;
  let hookUrl = '';
  let answer = 503;
  let file = '';
  const purged: string[] = [];
  const saved = process.env.CACHE_PURGE_URL;

  beforeAll(async () => {
    hook = http.createServer((req, res) => {
      purged.push(String(req.headers['xkey-purge']));
      res.writeHead(answer).end();
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/`;
    file = path.join(await tempDir('keys-purge'), 'keys.db');
  });
  afterAll(async () => {
    if (saved === undefined) delete process.env.CACHE_PURGE_URL;
    else process.env.CACHE_PURGE_URL = saved;
    await new Promise((resolve) => hook?.close(resolve));
  });

  /** The CLI in this process on `file`, with CACHE_PURGE_URL as given: its exit code and what it printed. */
  async function cli(purgeUrl: string | undefined, ...argv: string[]) {
    if (purgeUrl === undefined) delete process.env.CACHE_PURGE_URL;
    else process.env.CACHE_PURGE_URL = purgeUrl;
    const out: string[] = [];
    const err: string[] = [];
    const code = await keysCli(
      argv,
      file,
      (l) => out.push(l),
      (l) => err.push(l),
    );
    return { code, out: out.join('\n'), err: err.join('\n') };
  }
  const works = (key: string) => {
    const backend = new SqliteKeyBackend(file, { view: false });
    try {
      return new Keys(backend).verify(key);
    } finally {
      backend.close();
    }
  };

  it('says so and exits 69 when the purge gave up, and the key stays revoked', async () => {
    const key = (await cli(undefined, 'issue', 'gave-up@example.org')).out;
    answer = 503;
    const revoked = await cli(hookUrl, 'revoke', key);
    expect(revoked.code, revoked.err).toBe(EXIT_PURGE_FAILED);
    expect(revoked.err).toContain(`key-${keyId(key)}`);
    expect(revoked.err).toMatch(/purge gave up/);
    expect(revoked.err).not.toContain(key);
    expect(works(key)).toBe(false);
  }, 15_000);

  it('exits 0 once the purge is confirmed, having purged every key it stopped in one call', async () => {
    const first = (await cli(undefined, 'issue', 'confirmed@example.org')).out;
    const second = (await cli(undefined, 'rotate', first, '--grace', '1h')).out;
    answer = 200;
    purged.length = 0;
    const rotated = await cli(hookUrl, 'rotate', second, '--grace', '1h');
    expect(rotated.code, rotated.err).toBe(0);
    expect(purged[0]).toBe(`key-${keyId(second)} key-${keyId(first)}`);
    expect(purged).toHaveLength(2); // now, and once key caches settled
  });

  it('refuses a malformed CACHE_PURGE_URL with one line and exit 2, before touching a key', async () => {
    const key = (await cli(undefined, 'issue', 'malformed@example.org')).out;
    const refused = await cli('http//127.0.0.1:6081', 'revoke', key);
    expect(refused.code).toBe(2);
    expect(refused.err.split('\n')).toHaveLength(1);
    expect(refused.err).toMatch(/^keys: CACHE_PURGE_URL /);
    expect(works(key)).toBe(true);
  });
});
