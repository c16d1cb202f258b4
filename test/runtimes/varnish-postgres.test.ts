/**
 * Two `npm start` servers on one PostgreSQL database behind one real Varnish,
 * configured as docs/deploy.md ("Several servers") says: its VCL snippet (two
 * backends, a round-robin director, a /health probe) put in place of
 * deploy/varnish/default.vcl's `backend default`, the servers on loopback
 * in place of its example addresses. A key had through the portal (its
 * requests spread over both servers) is answered through Varnish, kept, and
 * refused through Varnish once revoked through the portal: the server that
 * revoked it purged it, and the other server's key cache dropped it.
 * Skipped only where `varnishd` is not installed (.ci/run installs it).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freeLoopbackPort } from '../../lib/ports.ts';
import { examplePath, ROUTES } from '../../src/shared/routes.ts';
import { eventually } from '../helpers/http.ts';
import { keyThroughPortal } from '../helpers/keys.ts';
import { type MailApi, startMailApi } from '../helpers/mail.ts';
import { ROOT, SAMPLE_SOURCE } from '../helpers/paths.ts';
import { type PgCluster, startPostgres } from '../helpers/postgres.ts';
import { hasVarnish, type Started, startServer } from '../helpers/processes.ts';
import { buildInto, tempDir } from '../helpers/temp.ts';

/**
 * The guide's two-server VCL: its indented block that begins `import
 * directors;`, with the servers' loopback ports for its example addresses.
 */
async function guideVcl(portA: number, portB: number): Promise<string> {
  const guide = await readFile(path.join(ROOT, 'docs/deploy.md'), 'utf8');
  const block = /\n((?: {4}import directors;\n)(?: {4}.*\n|\n)+?)\n(?! {4})/.exec(guide)?.[1];
  if (!block) throw new Error('docs/deploy.md has no VCL block beginning with import directors;');
  const snippet = block
    .split('\n')
    .map((l) => l.slice(4))
    .join('\n')
    .replace('.host = "10.0.0.11"; .port = "8888";', `.host = "127.0.0.1"; .port = "${portA}";`)
    .replace('.host = "10.0.0.12"; .port = "8888";', `.host = "127.0.0.1"; .port = "${portB}";`);
  expect(snippet).toContain(`"${portA}"`);
  expect(snippet).toContain(`"${portB}"`);
  const vcl = await readFile(path.join(ROOT, 'deploy/varnish/default.vcl'), 'utf8');
  const backend = /# npm start; tests rewrite this port\.\nbackend default \{[^}]*\}\n/.exec(vcl)?.[0];
  if (!backend) throw new Error('deploy/varnish/default.vcl has no backend default block');
  return vcl.replace(backend, snippet);
}

let cluster: PgCluster;
let mailApi: MailApi;
let varnish: ChildProcess;
let varnishOutput = '';
let varnishDir: string;
let front: string;
const servers: Started[] = [];

describe.skipIf(!hasVarnish)(
  'two servers on one PostgreSQL database behind Varnish, as docs/deploy.md sets them up',
  () => {
    beforeAll(async () => {
      cluster = await startPostgres('varnish');
      const databaseUrl = await cluster.database('varnish');
      mailApi = await startMailApi();
      const dist = await buildInto(SAMPLE_SOURCE, 'pg-varnish-dist');
      const [portA, portB, port] = [await freeLoopbackPort(), await freeLoopbackPort(), await freeLoopbackPort()];
      varnishDir = await mkdtemp(path.join(os.tmpdir(), 'varnish-pg-'));
      await writeFile(path.join(varnishDir, 'two.vcl'), await guideVcl(portA, portB));
      varnish = spawn(
        'varnishd',
        [
          '-F',
          '-j',
          'none',
          '-n',
          path.join(varnishDir, 'work'),
          '-a',
          `127.0.0.1:${port}`,
          '-f',
          path.join(varnishDir, 'two.vcl'),
          '-s',
          'malloc,32m',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      varnish.stdout!.on('data', (c) => (varnishOutput += c));
      varnish.stderr!.on('data', (c) => (varnishOutput += c));
      front = `http://127.0.0.1:${port}`;
      // Varnish answers a PURGE naming no tags itself (400): up, without asking a backend that is not there yet.
      if (
        !(await eventually(
          async () =>
            fetch(front, { method: 'PURGE' }).then(
              (r) => r.status === 400,
              () => false,
            ),
          20_000,
          100,
        ))
      )
        throw new Error(`varnishd did not answer:\n${varnishOutput}`);
      const env = async (name: string, serverPort: number) => ({
        PORT: String(serverPort),
        DIST_DIR: dist,
        KEYS_DB: path.join(await tempDir(`pg-varnish-${name}`), 'keys.db'),
        DATABASE_URL: databaseUrl,
        MAIL_API_URL: mailApi.url,
        MAIL_API_TOKEN: 'test-token',
        NODE_ENV: 'production',
        CACHE_PURGE_URL: `${front}/`,
        TRUSTED_PROXIES: '127.0.0.1',
        PORTAL_ISSUE_LIMIT_PER_MINUTE: '1000',
      });
      const started = await Promise.allSettled([
        startServer(await env('a', portA)),
        startServer(await env('b', portB)),
      ]);
      for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
      for (const s of started) if (s.status === 'rejected') throw s.reason;
      // Both backends healthy to the probe (two good probes of three,
      // every 2 s): each of three requests in a row reaches a server.
      const healthy = await eventually(
        async () => {
          for (let i = 0; i < 3; i++) if ((await fetch(`${front}/health`)).status !== 200) return false;
          return true;
        },
        30_000,
        500,
      );
      if (!healthy) throw new Error(`Varnish did not find both servers healthy:\n${varnishOutput}`);
    });

    afterAll(async () => {
      await Promise.all(servers.map((s) => s.stop()));
      if (varnish && varnish.exitCode === null) {
        const exited = new Promise((resolve) => varnish.once('exit', resolve));
        varnish.kill('SIGTERM');
        await exited;
      }
      if (varnishDir) await rm(varnishDir, { recursive: true, force: true });
      await mailApi?.stop();
      await cluster?.remove();
    });

    it('serves a key had through the portal from both servers and the cache, and refuses it through the cache once revoked', async () => {
      const { key, session } = await keyThroughPortal(front, mailApi);
      const lookup = `${front}${examplePath(
        ROUTES.find((r) => r.id === 'ceremonyByYear')!,
        key,
      )}`;
      // Both servers know the key, whichever issued it.
      for (const server of servers)
        expect(
          (
            await fetch(
              `${server.base}${examplePath(
                ROUTES.find((r) => r.id === 'ceremonyByYear')!,
                key,
              )}`,
            )
          ).status,
        ).toBe(200);
      expect((await fetch(lookup)).status).toBe(200);
      const kept = await fetch(lookup);
      expect([kept.status, kept.headers.get('x-varnish')]).toEqual([200, expect.stringMatching(/^\d+ \d+$/)]); // a hit
      const revokedAt = Date.now();
      const revoked = await fetch(`${front}/portal/keys/revoke`, {
        method: 'POST',
        headers: { authorization: `Bearer ${session}` },
      });
      expect(revoked.status).toBe(200);
      let refusedAfter = Infinity;
      for (let i = 0; i < 100 && refusedAfter === Infinity; i++, await new Promise((r) => setTimeout(r, 20)))
        if ((await fetch(lookup)).status === 403) refusedAfter = Date.now() - revokedAt;
      expect(refusedAfter).toBeLessThan(2_000);
      for (const server of servers)
        expect(
          (
            await fetch(
              `${server.base}${examplePath(
                ROUTES.find((r) => r.id === 'ceremonyByYear')!,
                key,
              )}`,
            )
          ).status,
        ).toBe(403);
      console.log(
        `behind Varnish: a key revoked through the portal was refused through the cache ${refusedAfter} ms after the revoke began`,
      );
    });
  },
);
