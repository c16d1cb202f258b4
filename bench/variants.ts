/**
 * Where our server's time goes, measured: ours next to the same core with one
 * more cost taken away, each in its own process, driven by wrk like bench.ts.
 * Evidence for changes proposed to src/; nothing here is used by the API.
 *
 *   tsx bench/variants.ts            (driver: builds the full archive, prints a table)
 *   tsx bench/variants.ts <variant>  (child: serves one variant)
 *
 * Variants:
 * - ours: createNodeServer as npm start runs it (since 2652e9c it trusts a
 *   verified key for 1 s and keeps API paths away from the public-file stat);
 * - ours+memo: the same server's core, but a finished 200 reply is remembered
 *   per path (key segment left out) and Accept-Encoding, behind the same key
 *   check and rate limit: what a reply cache in the core would give;
 * - ceiling+headers: bench.ts's ceiling, but sending ours's full header set.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { build } from '../build/build.ts';
import type { ApiReply, ApiRequest } from '../src/core.ts';
import { Keys } from '../src/keys.ts';
import { createNodeServer } from '../src/server/server.node.ts';
import { SqliteKeyBackend } from '../src/server/sqlite-keys.node.ts';

const VARIANTS = ['ours', 'ours+memo', 'ceiling+headers'] as const;
type Variant = (typeof VARIANTS)[number];

function serve(variant: Variant, dist: string, keysDb: string): http.Server {
  const node = createNodeServer({ dist, keysDb, rateLimitPerMinute: 1e8 });
  if (variant === 'ours') return node.server;
  const requestOf = (req: http.IncomingMessage): ApiRequest => ({ method: req.method ?? 'GET', url: req.url ?? '/', header: (n) => req.headers[n] as string | undefined });
  const send = (res: http.ServerResponse, out: ApiReply) => {
    res.writeHead(out.status, out.headers);
    res.end(out.body ?? undefined);
  };
  const memo = new Map<string, ApiReply>();
  if (variant === 'ceiling+headers') {
    // The bytes and headers ours sends for each URL, asked once, replayed.
    return http.createServer(async (req, res) => {
      const k = `${req.url}\u0000${req.headers['accept-encoding'] ?? ''}`;
      let out = memo.get(k);
      if (!out) memo.set(k, (out = await node.api.reply(requestOf(req))));
      send(res, out);
    });
  }
  const trusted = new Map<string, number>();
  const memoised = async (request: ApiRequest): Promise<ApiReply> => {
    const at = request.url.lastIndexOf('/apikey=');
    if (at < 0) return node.api.reply(request);
    const k = `${request.url.slice(0, at)}\u0000${request.header('accept-encoding') ?? ''}`;
    const hit = memo.get(k);
    const key = decodeURIComponent(request.url.slice(at + '/apikey='.length));
    if (!hit || !((trusted.get(key) ?? 0) > Date.now()) || !node.api.limiter.hit(key).ok) {
      const out = await node.api.reply(request);
      if (out.status === 200) {
        memo.set(k, out);
        trusted.set(key, Date.now() + 1000);
      }
      return out;
    }
    return hit;
  };
  return http.createServer((req, res) => {
    memoised(requestOf(req)).then((out) => send(res, out));
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function driver() {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'faa-variants-'));
  process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
  const dist = path.join(tmp, 'dist');
  const keysFile = path.join(tmp, 'keys.db');
  await build({ source: process.env.ARCHIVE_SOURCE ?? '/work/shared/data/oscars.csv', out: dist, summary: path.join(tmp, 's.json'), log: () => {} });
  const key = await new Keys(new SqliteKeyBackend(keysFile, { view: false })).issue('variants@example.org');
  const script = path.join(tmp, 'r.lua');
  writeFileSync(script, 'done = function(s, l) io.write(string.format("WRK %d %d %d\\n", s.requests - s.errors.status, s.duration, s.errors.status)) end\n');
  const workloads: [string, string, string?][] = [
    ['person', `/person/name=Meryl%20Streep/apikey=${key}`],
    ['company', `/person/name=Metro-Goldwyn-Mayer/apikey=${key}`],
    ['actor', `/award/name=Actor/apikey=${key}`],
    ['year', `/archive/year=2000/apikey=${key}`],
    ['archive-br', `/archive/apikey=${key}`, 'br'],
    ['403', '/person/name=Meryl%20Streep/apikey=faa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
  ];
  const seconds = Number(process.env.BENCH_SECONDS ?? 3);
  const rows: string[] = [];
  for (const variant of VARIANTS) {
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', import.meta.filename, variant, dist, keysFile], { stdio: ['ignore', 'pipe', 'inherit'] });
    const port = await new Promise<number>((resolve) => child.stdout!.on('data', (c: Buffer) => /listening (\d+)/.test(String(c)) && resolve(Number(/listening (\d+)/.exec(String(c))![1]))));
    const cells: string[] = [];
    for (const [, url, enc] of workloads) {
      const run = () => {
        const args = ['-t1', '-c32', `-d${seconds}s`, '-s', script, ...(enc ? ['-H', `Accept-Encoding: ${enc}`] : []), `http://127.0.0.1:${port}${url}`];
        const [ok, us, bad] = /WRK (\d+) (\d+) (\d+)/.exec(execFileSync('wrk', args, { encoding: 'utf8' }))!.slice(1).map(Number);
        return (url.includes('faa_AAAA') ? bad : ok) / (us / 1e6);
      };
      run();
      cells.push(median([run(), run(), run()]).toFixed(0));
    }
    rows.push(`| ${variant} | ${cells.join(' | ')} |`);
    console.log(rows.at(-1));
    await new Promise((r) => {
      child.once('exit', r);
      child.kill('SIGTERM');
    });
  }
  console.log(`\n| variant | ${workloads.map((w) => w[0]).join(' | ')} |\n|---|${workloads.map(() => '---:').join('|')}|\n${rows.join('\n')}`);
}

if (process.argv[1] && realpathSync(process.argv[1]) === import.meta.filename) {
  const [variant, dist, keysFile] = process.argv.slice(2);
  if (!variant) await driver();
  else {
    const server = serve(variant as Variant, dist, keysFile);
    server.listen(0, '127.0.0.1', () => console.log(`listening ${(server.address() as { port: number }).port}`));
    process.on('SIGTERM', () => process.exit(0));
  }
}
