/**
 * `npm run dev:netlify` (cli/netlify-local.ts) as a developer runs it, offline:
 * it answers --help and a mistyped option as every command does, and then,
 * on a built sample, answers as a deploy would: /health and the public files
 * without a key, `_data/` never, a key got through the real portal function
 * (sign-in mail in the local outbox, session, new key, all in the local Blobs
 * store) answering a lookup with the bytes the core answers, and the key
 * refused once revoked. It stops cleanly, the Deno child with it. With
 * MAIL_API_URL the portal function's mail goes through the HTTP e-mail API.
 */
import { spawnSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi } from '../../src/api/handler.ts';
import { DiskData } from '../../adapters/_node/disk-data.ts';
import { startMailApi } from '../helpers/mail.ts';
import { eventually, rawRequestLine } from '../helpers/http.ts';
import { ROOT, SAMPLE_SOURCE } from '../helpers/paths.ts';
import { isLoopback, listeningAddresses, type Started, startNetlifyLocal } from '../helpers/processes.ts';
import { buildInto, tempDir } from '../helpers/temp.ts';

/** Processes running the edge stand-in over `dist` (a temp folder of this test alone), by their command lines. */
async function edgeProcesses(dist: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir('/proc')).filter((p) => /^\d+$/.test(p))) {
    const line = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (line.includes('cli/lib/netlify-edge.ts') && line.includes(dist)) found.push(pid);
  }
  return found;
}

const run = (...args: string[]) =>
  spawnSync(process.execPath, ['cli/netlify-local.ts', ...args], { cwd: ROOT, encoding: 'utf8' });

describe('npm run dev:netlify, its command line', () => {
  it('prints its usage for --help and exits 0 without starting anything', () => {
    const help = run('--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage: npm run dev:netlify\n/);
    expect(help.stdout).toContain('NETLIFY_LOCAL_DIR');
    expect(help.stdout).not.toContain('ready');
  });

  it('answers an unknown option with one line and exit 2', () => {
    const wrong = run('--port=1');
    expect(wrong.status).toBe(2);
    expect(wrong.stderr.trim().split('\n')).toEqual(["dev:netlify: Unknown option '--port'; see --help"]);
  });

  it('stops with one line and exit 1, before building, for MAIL_API_URL without MAIL_API_TOKEN', () => {
    const env = {
      ...process.env,
      MAIL_API_URL: 'https://mail.example.org/emails',
      MAIL_API_TOKEN: '',
      DIST_DIR: '/nonexistent/dist',
    };
    const refused = spawnSync(process.execPath, ['cli/netlify-local.ts'], { cwd: ROOT, encoding: 'utf8', env });
    expect(refused.status).toBe(1);
    expect(refused.stderr.trim().split('\n')).toEqual([
      'dev:netlify: MAIL_API_URL is set but MAIL_API_TOKEN is not: set the e-mail API token, which is sent as a Bearer token',
    ]);
  });
});

describe('npm run dev:netlify with MAIL_API_URL', () => {
  it("sends the portal function's sign-in mail through the HTTP e-mail API, and the link in it signs in", async () => {
    const api = await startMailApi();
    const dist = await buildInto(SAMPLE_SOURCE, 'netlify-local-mail');
    const token = 're_netlify_local_SECRET';
    const env = {
      DIST_DIR: dist,
      ARCHIVE_SOURCE: SAMPLE_SOURCE,
      NETLIFY_LOCAL_DIR: await tempDir('netlify-local-mail'),
      MAIL_API_URL: api.url,
      MAIL_API_TOKEN: token,
    };
    const server = await startNetlifyLocal(env);
    try {
      expect(server.output()).toContain(`mail: HTTP mail API ${api.url}`);
      const post = (p: string, body: unknown) =>
        fetch(`${server.base}${p}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      expect((await post('/portal/sign-in', { email: 'api@example.org' })).status).toBe(202);
      const [call] = api.to('api@example.org');
      expect(call).toMatchObject({ method: 'POST', path: '/emails', authorization: `Bearer ${token}` });
      const link = new RegExp(`href="${server.base}/portal#token=(fat_[A-Za-z0-9_-]{43})"`).exec(call.body.html!)!;
      expect((await post('/portal/session', { token: link[1] })).status).toBe(200);
    } finally {
      await server.stop();
      await api.stop();
    }
    expect(server.output()).not.toContain(token);
  });
});

describe('npm run dev:netlify, running', () => {
  let dist: string;
  let local: string;
  let server: Started;
  beforeAll(async () => {
    dist = await buildInto(SAMPLE_SOURCE, 'netlify-local');
    local = await tempDir('netlify-local-data');
    server = await startNetlifyLocal({
      DIST_DIR: dist,
      ARCHIVE_SOURCE: SAMPLE_SOURCE,
      NETLIFY_LOCAL_DIR: local,
      KEY_CACHE_TTL_MS: '0',
    });
  });
  afterAll(() => server?.stop());

  const get = (p: string, headers: Record<string, string> = {}) => fetch(`${server.base}${p}`, { headers });
  const post = (p: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.base}${p}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it('listens on loopback only, every helper included: the local Blobs server, the edge function, the mail outbox', () => {
    const addresses = listeningAddresses(server.child.pid!);
    expect(addresses.length).toBeGreaterThanOrEqual(3); // the front, the Blobs server, Deno's edge function
    expect(addresses.filter((a) => !isLoopback(a))).toEqual([]);
  });

  it('answers /health from the edge function, without a key', async () => {
    const health = await get('/health');
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({
      status: 'ok',
      archive: { sample: true, firstYear: 1929, lastYear: 2026 },
    });
  });

  it('serves the public files and the portal page, and never the data folder', async () => {
    const page = await get('/', { accept: 'text/html' });
    expect([page.status, await page.text()]).toEqual([200, await readFile(path.join(dist, 'index.html'), 'utf8')]);
    expect((await get('/openapi.json')).status).toBe(200);
    const portal = await get('/portal');
    expect([portal.status, portal.headers.get('content-type')]).toEqual([200, expect.stringContaining('text/html')]);
    const data = await get('/_data/manifest.json');
    expect([data.status, await data.text()]).toEqual([404, '{"error":"Not Found"}']);
    expect((await get('/archive/year=2026/apikey=faa_nope')).status).toBe(403);
  });

  it('issues a key through the portal function and the local Blobs store, and answers a keyed request as the core does', async () => {
    expect((await post('/portal/sign-in', { email: 'local@example.org' })).status).toBe(202);
    let mail = '';
    await eventually(async () => {
      const files = await readdir(path.join(local, 'mail')).catch(() => []);
      mail = files.length ? await readFile(path.join(local, 'mail', files[0]), 'utf8') : '';
      return mail !== '';
    });
    const token = /(fat_[A-Za-z0-9_-]{43})/.exec(mail)![1];
    expect(mail).toContain(`${server.base}/portal#token=${token}`);
    const { session } = (await (await post('/portal/session', { token })).json()) as { session: string };
    const made = await post('/portal/keys', undefined, { authorization: `Bearer ${session}` });
    expect(made.status).toBe(201);
    const { apiKey } = (await made.json()) as { apiKey: string };

    const lookup = `/movie/name=Sinners/year=2026/apikey=${apiKey}`;
    const answer = await get(lookup);
    expect(answer.status).toBe(200);
    const core = createApi({ data: new DiskData(dist), keys: { verify: () => true } });
    const expected = await core.reply({ method: 'GET', url: lookup, header: () => null });
    expect(await answer.text()).toBe(new TextDecoder().decode(expected.body!));

    expect((await post('/portal/keys/revoke', undefined, { authorization: `Bearer ${session}` })).status).toBe(200);
    expect(await eventually(async () => (await get(lookup)).status === 403)).toBe(true);
  });

  it('stops on SIGTERM with exit 0, taking the edge function under Deno with it', async () => {
    expect(await edgeProcesses(dist)).toHaveLength(1);
    await server.stop();
    expect(server.child.exitCode).toBe(0);
    await expect(fetch(`${server.base}/health`)).rejects.toThrow();
    expect(await eventually(async () => (await edgeProcesses(dist)).length === 0, 5_000)).toBe(true);
  });
});

/** A request with `path` as the client sends it (curl --path-as-is): Node's client leaves the path as given. */
function pathAsIs(port: number, pathname: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: pathname, agent: false }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('npm run dev:netlify and a path that does not parse as a URL', () => {
  let dist: string;
  let server: Started | undefined;
  beforeAll(async () => {
    dist = await buildInto(SAMPLE_SOURCE, 'netlify-local-bad');
  });
  afterAll(() => server?.stop());

  it('answers 400 with a JSON error and keeps running', async () => {
    server = await startNetlifyLocal({
      DIST_DIR: dist,
      ARCHIVE_SOURCE: SAMPLE_SOURCE,
      NETLIFY_LOCAL_DIR: await tempDir('netlify-local-bad'),
    });
    const answers = [
      await pathAsIs(server.port, '//x:y@%zz/'),
      await rawRequestLine(server.port, 'GET //x:y@%zz/ HTTP/1.1'),
      await rawRequestLine(server.port, 'GET //x:y@%zz/health HTTP/1.1'),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(Object.keys(JSON.parse(answer.body))).toEqual(['error']);
    }
    expect(server.child.exitCode).toBeNull();
    expect((await fetch(`${server.base}/health`)).status).toBe(200);
  });

  it('takes the edge function under Deno with it however it ends, killed outright included', async () => {
    expect(await edgeProcesses(dist)).toHaveLength(1);
    server!.child.kill('SIGKILL');
    await new Promise((resolve) =>
      server!.child.exitCode !== null || server!.child.signalCode !== null
        ? resolve(null)
        : server!.child.once('exit', resolve),
    );
    server = undefined;
    expect(await eventually(async () => (await edgeProcesses(dist)).length === 0, 5_000)).toBe(true);
  });
});
