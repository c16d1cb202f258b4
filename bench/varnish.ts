/**
 * npm run bench:varnish: the repeated person lookup through Varnish
 * (deploy/varnish/default.vcl) in front of `npm start`, beside the same
 * lookup straight to the server: requests per second by wrk (one thread,
 * BENCH_CONNECTIONS connections, BENCH_SECONDS), and the share of requests
 * that reached the server, counted from its access log. Needs varnishd and
 * wrk; serves DIST_DIR (default dist/). Prints two table rows.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { commandLine } from '../lib/command-line.ts';
import { Keys } from '../src/keys/rules.ts';
import { SqliteKeyBackend } from '../src/keys/stores/sqlite.node.ts';

const USAGE = `usage: npm run bench:varnish

The repeated person lookup (Meryl Streep) through Varnish, with
deploy/varnish/default.vcl in front of npm start, beside the same lookup
straight to the server: requests per second (wrk) and the share of requests
that reached the server (from its access log). Two table rows.

Needs varnishd (Debian's varnish and varnish-modules) and wrk, and a built
dist/ (DIST_DIR). BENCH_SECONDS (4) and BENCH_CONNECTIONS (32) set the runs.

Options:
  -h, --help   this text`;
const ROOT = path.resolve(import.meta.dirname, '..');
const DIST = path.resolve(process.env.DIST_DIR || path.join(ROOT, 'dist'));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const LOOKUP = '/person/name=Meryl%20Streep';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

async function until(check: () => Promise<boolean>, ms: number) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('did not come up');
}

/** wrk against `url`: answers per second and how many it sent. */
function wrk(url: string): { rps: number; requests: number } {
  const out = execFileSync('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${SECONDS}s`, '-H', 'Accept-Encoding: gzip', url], {
    encoding: 'utf8',
  });
  const requests = Number(/(\d+) requests in/.exec(out)![1]);
  if (/Non-2xx/.test(out)) throw new Error(`not every answer was 200:\n${out}`);
  return { rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1]), requests };
}

/**
 * The two rows, over the build in `dist` (default DIST_DIR, else dist/); npm run bench calls it as its varnish phase.
 */
export async function benchVarnish(dist = DIST): Promise<string[]> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'bench-varnish-'));
  const backend = new SqliteKeyBackend(path.join(tmp, 'keys.db'));
  const key = await new Keys(backend).issue('bench@example.org');
  backend.close();
  const [serverPort, varnishPort] = [await freePort(), await freePort()];
  writeFileSync(
    path.join(tmp, 'bench.vcl'),
    readFileSync(path.join(ROOT, 'deploy/varnish/default.vcl'), 'utf8').replace(
      '.port = "8888";',
      `.port = "${serverPort}";`,
    ),
  );
  const varnish = spawn(
    'varnishd',
    [
      '-F',
      '-j',
      'none',
      '-n',
      path.join(tmp, 'work'),
      '-a',
      `127.0.0.1:${varnishPort}`,
      '-f',
      path.join(tmp, 'bench.vcl'),
      '-s',
      'malloc,64m',
    ],
    { stdio: 'ignore' },
  );
  const logFile = path.join(tmp, 'access.log');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(serverPort),
    DIST_DIR: dist,
    KEYS_DB: path.join(tmp, 'keys.db'),
    CACHE_PURGE_URL: `http://127.0.0.1:${varnishPort}/`,
    RATE_LIMIT_PER_MINUTE: '100000000',
    NODE_ENV: 'production',
  };
  delete env.ARCHIVE_SOURCE;
  const out = openSync(logFile, 'w');
  const server = spawn(process.execPath, ['cli/start.ts'], { cwd: ROOT, env, stdio: ['ignore', out, out] });
  try {
    await until(async () => (await fetch(`http://127.0.0.1:${serverPort}/health`)).ok, 90_000);
    await until(async () => (await fetch(`http://127.0.0.1:${varnishPort}/health`)).ok, 20_000);
    const reached = () =>
      readFileSync(logFile, 'utf8')
        .split('\n')
        .filter((l) => l.includes(`GET ${LOOKUP}/`)).length;
    const rows: string[] = [];
    for (const [label, port] of [
      ['repeated lookup straight to the server', serverPort],
      ['repeated lookup through Varnish', varnishPort],
    ] as const) {
      const before = reached();
      const run = wrk(`http://127.0.0.1:${port}${LOOKUP}/apikey=${key}`);
      await new Promise((r) => setTimeout(r, 300)); // the access log's last batch
      const share = (reached() - before) / run.requests;
      rows.push(
        `| ${label} | ${Math.round(run.rps).toLocaleString('en')} | ${run.requests.toLocaleString('en')} | ${reached() - before} (${(share * 100).toFixed(share < 0.01 ? 4 : 1)} %) |`,
      );
    }
    return rows;
  } finally {
    server.kill('SIGTERM');
    varnish.kill('SIGTERM');
    await Promise.all(
      [server, varnish].map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))),
    );
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The rows with their table head. */
export const varnishTable = (rows: string[]) =>
  `| workload (${CONNECTIONS} connections, ${SECONDS} s) | requests/s | requests | reached the server |\n|---|---|---|---|\n${rows.join('\n')}`;

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  commandLine({ name: 'bench:varnish', usage: USAGE, options: {} });
  console.log(varnishTable(await benchVarnish()));
}
