/**
 * The shared-cache headers and purges on the platforms' dev servers: `npm
 * run dev:netlify` (the edge function under Deno, the portal function) and
 * `npm run dev:cloudflare` (workerd). Neither emulates its platform's cache,
 * so the platform purge is a stand-in there that says which tag a deploy
 * would purge: revoke and rotate must name the key's id tag.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyTag } from '../../src/http/cache.ts';
import { keyId } from '../../src/keys/secrets.ts';
import { type MailApi, startMailApi } from '../helpers/mail.ts';
import { eventually } from '../helpers/http.ts';
import { keyThroughPortal } from '../helpers/keys.ts';
import { SAMPLE_SOURCE } from '../helpers/paths.ts';
import { type Started, startNetlifyLocal, startWorker } from '../helpers/processes.ts';
import { buildInto, tempDir } from '../helpers/temp.ts';

const LOOKUP = '/person/name=Emil%20Jannings';
const bearer = (session: string) => ({ method: 'POST', headers: { authorization: `Bearer ${session}` } });

let dist: string;
beforeAll(async () => {
  dist = await buildInto(SAMPLE_SOURCE, 'cache-platforms');
}, 120_000);

describe('dev:netlify', () => {
  let server: Started;
  let local: string;
  beforeAll(async () => {
    local = await tempDir('cache-netlify');
    server = await startNetlifyLocal({
      DIST_DIR: dist,
      ARCHIVE_SOURCE: SAMPLE_SOURCE,
      NETLIFY_LOCAL_DIR: local,
      KEY_CACHE_TTL_MS: '0',
    });
  }, 120_000);
  afterAll(() => server?.stop());

  /** A key through the portal, its sign-in mail read from the local outbox. */
  async function key(email: string) {
    const post = (p: string, body?: unknown) =>
      fetch(`${server.base}${p}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const before = (await readdir(path.join(local, 'mail')).catch(() => [])).length;
    expect((await post('/portal/sign-in', { email })).status).toBe(202);
    let mail = '';
    await eventually(async () => {
      const files = (await readdir(path.join(local, 'mail')).catch(() => [])).sort();
      const mine = [];
      for (const f of files) if ((await readFile(path.join(local, 'mail', f), 'utf8')).includes(email)) mine.push(f);
      mail = mine.length && files.length > before ? await readFile(path.join(local, 'mail', mine.at(-1)!), 'utf8') : '';
      return mail !== '';
    });
    const token = /(fat_[A-Za-z0-9_-]{43})/.exec(mail)![1];
    const { session } = (await (await post('/portal/session', { token })).json()) as { session: string };
    const made = await fetch(`${server.base}/portal/keys`, bearer(session));
    return { key: ((await made.json()) as { apiKey: string }).apiKey, session };
  }

  it('answers a good key with Netlify-CDN-Cache-Control and Netlify-Cache-Tag, a bad one without', async () => {
    const { key: k } = await key('netlify-headers@example.org');
    const ok = await fetch(`${server.base}${LOOKUP}/apikey=${k}`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('netlify-cdn-cache-control')).toBe('public, max-age=31536000');
    expect(ok.headers.get('netlify-cache-tag')?.split(',')).toContain(keyTag(keyId(k)));
    expect(ok.headers.get('cache-control')).toBe('private, max-age=86400');
    const refused = await fetch(`${server.base}${LOOKUP}/apikey=faa_${'x'.repeat(32)}`);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('netlify-cdn-cache-control')).toBeNull();
    expect((await fetch(`${server.base}/health`)).headers.get('netlify-cdn-cache-control')).toBeNull();
  });

  it('revoke and rotate purge the key’s tag through the portal function', async () => {
    const { key: first, session } = await key('netlify-purge@example.org');
    const rotated = await fetch(`${server.base}/portal/keys/rotate`, bearer(session));
    expect(rotated.status).toBe(200);
    const { apiKey: second } = (await rotated.json()) as { apiKey: string };
    expect(server.output()).toContain(`cache purge skipped (no Netlify CDN here): ${keyTag(keyId(first))}`);
    expect(server.output()).not.toContain(keyTag(keyId(second)));
    expect((await fetch(`${server.base}/portal/keys/revoke`, bearer(session))).status).toBe(200);
    expect(server.output()).toContain(`cache purge skipped (no Netlify CDN here): ${keyTag(keyId(second))}`);
    expect(
      await eventually(async () => (await fetch(`${server.base}${LOOKUP}/apikey=${second}`)).status === 403, 2000),
    ).toBe(true);
  });
});

describe('dev:cloudflare', () => {
  let mailApi: MailApi;
  let worker: Awaited<ReturnType<typeof startWorker>> | undefined;
  beforeAll(async () => {
    mailApi = await startMailApi();
    worker = await startWorker(dist, { MAIL_API_URL: mailApi.url, MAIL_API_TOKEN: 'tok-cache' });
  }, 240_000);
  afterAll(async () => {
    await worker?.stop();
    await mailApi?.stop();
  });
  const base = () => `http://127.0.0.1:${worker!.port}`;

  it('answers a good key with Cloudflare-CDN-Cache-Control and Cache-Tag; /health and the portal say no-store to the cache', async () => {
    const { key } = await keyThroughPortal(base(), mailApi);
    const ok = await fetch(`${base()}${LOOKUP}/apikey=${key}`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('cloudflare-cdn-cache-control')).toBe('public, max-age=31536000');
    expect(ok.headers.get('cache-tag')?.split(',')).toContain(keyTag(keyId(key)));
    const refused = await fetch(`${base()}${LOOKUP}/apikey=faa_${'x'.repeat(32)}`);
    expect([refused.status, refused.headers.get('cloudflare-cdn-cache-control')]).toEqual([403, null]);
    expect((await fetch(`${base()}/health`)).headers.get('cloudflare-cdn-cache-control')).toBe('no-store');
    expect((await fetch(`${base()}/portal`)).headers.get('cloudflare-cdn-cache-control')).toBe('no-store');
  });

  it('revoke and rotate purge the key’s tag, guarded where ctx.cache is missing (wrangler dev)', async () => {
    const { key, session } = await keyThroughPortal(base(), mailApi);
    const rotated = await fetch(`${base()}/portal/keys/rotate`, bearer(session));
    expect(rotated.status).toBe(200);
    const { apiKey } = (await rotated.json()) as { apiKey: string };
    expect(
      await eventually(
        async () => worker!.logs.join('\n').includes(`cache purge skipped (no ctx.cache here): ${keyTag(keyId(key))}`),
        3000,
      ),
    ).toBe(true);
    expect((await fetch(`${base()}/portal/keys/revoke`, bearer(session))).status).toBe(200);
    expect(
      await eventually(
        async () =>
          worker!.logs.join('\n').includes(`cache purge skipped (no ctx.cache here): ${keyTag(keyId(apiKey))}`),
        3000,
      ),
    ).toBe(true);
    expect(
      await eventually(async () => (await fetch(`${base()}${LOOKUP}/apikey=${apiKey}`)).status === 403, 2000),
    ).toBe(true);
  });
});
