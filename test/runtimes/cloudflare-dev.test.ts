/**
 * `npm run dev:cloudflare` as a process (test/helpers/processes.ts startWorker: the
 * Worker under wrangler dev, workerd, a local D1): what it hands wrangler.
 * Secrets (MAIL_API_TOKEN) reach the Worker through an env file of
 * wrangler's, mode 0600 in a private folder removed at exit, never on a
 * command line, which any local user reads with `ps`. Its isolate warms up
 * as it starts (adapters/_worker.ts `warmUp`), saying no failure. A request
 * whose path does not parse as a URL is answered 400 as JSON, and it keeps
 * running.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MailApi, startMailApi } from '../helpers/mail.ts';
import { rawRequestLine } from '../helpers/http.ts';
import { isLoopback, listeningAddresses, startWorker } from '../helpers/processes.ts';
import { sampleSandbox, type Sandbox } from '../helpers/servers.ts';
import { keyThroughPortal } from '../helpers/keys.ts';

/**
 * Every process's command line on this machine, as `ps` shows them: pid and
 * arguments; with `group`, only the processes of that process group (the
 * dev:cloudflare this test started, its wrangler and workerd), never another
 * project's wrangler running beside it.
 */
function commandLines(group?: number): { pid: number; args: string[] }[] {
  const lines = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // stat is `pid (name) state ppid pgrp …`; the name may hold spaces and parentheses.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (group !== undefined && Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) !== group) continue;
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
      lines.push({ pid: Number(entry), args });
    } catch {
      // ended meanwhile
    }
  }
  return lines;
}

let box: Sandbox;
let mailApi: MailApi;
let worker: Awaited<ReturnType<typeof startWorker>> | undefined;
// A `$NAME` that an env file's expansion would replace, and a quote that decides the file's quoting.
const secret = `tok-${Math.random().toString(36).slice(2)}-$HOME-'q'`;

beforeAll(async () => {
  box = await sampleSandbox('cloudflare-dev');
  mailApi = await startMailApi();
  worker = await startWorker(box.dist, { MAIL_API_URL: mailApi.url, MAIL_API_TOKEN: secret });
}, 240_000);
afterAll(async () => {
  await worker?.stop();
  await mailApi?.stop();
  await box?.remove();
});

describe('dev:cloudflare and its secrets', () => {
  it('puts no secret on any command line; wrangler reads them from a private env file', () => {
    // The secret is on no command line anywhere on the machine;
    // wrangler's own is looked up among the processes this test started.
    const carrying = commandLines().filter(({ args }) =>
      args.some((a) => a.includes(secret) || a.includes(secret.slice(0, 16))),
    );
    expect(carrying.map(({ pid, args }) => `${pid}: ${args.join(' ')}`)).toEqual([]);
    const dev = commandLines(worker!.pid).filter(
      ({ args }) => args.some((a) => a.endsWith('wrangler.js')) && args.includes('dev'),
    );
    expect(dev.length).toBeGreaterThan(0);
    const envFile = dev[0].args[dev[0].args.indexOf('--env-file') + 1];
    expect(envFile).toMatch(/faa-worker-env-[^/]+\/worker\.env$/);
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(envFile)).mode & 0o777).toBe(0o700);
  });

  it('still gives the Worker the secret as it was: the sign-in mail goes out with it', async () => {
    const email = 'secret@example.org';
    const asked = await fetch(`http://127.0.0.1:${worker!.port}/portal/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    expect(asked.status).toBe(202);
    expect(mailApi.to(email).map((c) => c.authorization)).toEqual([`Bearer ${secret}`]);
  });

  it('warms up as its isolate starts: the warm-up says no failure, and a search answers', async () => {
    const base = `http://127.0.0.1:${worker!.port}`;
    const { key } = await keyThroughPortal(base, mailApi);
    expect((await fetch(`${base}/search/name=jannings/apikey=${key}`)).status).toBe(200);
    expect(worker!.logs.filter((line) => line.includes('warm-up'))).toEqual([]);
  });

  it('answers 400 with a JSON error to a path that does not parse as a URL, and keeps running', async () => {
    for (const line of [
      'GET //x:y@%zz/ HTTP/1.1',
      'GET //x:y@%zz/health HTTP/1.1',
      'GET %zz HTTP/1.1',
      'GET http://x:y@%zz/ HTTP/1.1',
      'GET * HTTP/1.1',
      'GET /a b/c HTTP/1.1',
    ]) {
      const answer = await rawRequestLine(worker!.port, line);
      expect([line, answer.status]).toEqual([line, 400]);
      expect(Object.keys(JSON.parse(answer.body))).toEqual(['error']);
    }
    expect((await fetch(`http://127.0.0.1:${worker!.port}/health`)).status).toBe(200);
  });

  it('never prints or stores a whole key: not in wrangler’s lines, not in its local state', async () => {
    const base = `http://127.0.0.1:${worker!.port}`;
    const { key } = await keyThroughPortal(base, mailApi);
    const paths = [
      `/person/name=Emil%20Jannings/apikey=${key}`,
      `/ceremony/year=1928/apikey=${key}`,
      `/search/name=${key}/apikey=${key}`,
      `/person/name=${encodeURIComponent(key)}/apikey=faa_${'x'.repeat(32)}`,
    ];
    for (const p of paths) await (await fetch(`${base}${p}`)).arrayBuffer();
    expect((await fetch(`${base}${paths[0]}`)).status).toBe(200);
    // wrangler's own lines and stores are written after the reply
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const printed = worker!.logs.filter((line) => line.includes(key) || line.includes(key.slice(4)));
    expect(printed).toEqual([]);
    const stored: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(file);
        else if (entry.isFile() && readFileSync(file).includes(key.slice(4)))
          stored.push(path.relative(worker!.state, file));
      }
    };
    walk(worker!.state);
    expect(stored).toEqual([]);
  });

  it('listens on loopback only: the front server, wrangler, workerd and the mail outbox', () => {
    const addresses = listeningAddresses(worker!.pid);
    expect(addresses.length).toBeGreaterThanOrEqual(2);
    expect(addresses.filter((a) => !isLoopback(a))).toEqual([]);
  });

  it('removes the env file when it stops', async () => {
    const dev = commandLines(worker!.pid).find(
      ({ args }) => args.some((a) => a.endsWith('wrangler.js')) && args.includes('--env-file'),
    )!;
    const folder = path.dirname(dev.args[dev.args.indexOf('--env-file') + 1]);
    await worker!.stop();
    worker = undefined;
    // Its own folder only: another dev:cloudflare of this run (another test file) may have one of its own meanwhile.
    expect(readdirSync(path.dirname(folder))).not.toContain(path.basename(folder));
    expect(() => statSync(folder)).toThrow();
  });
});
