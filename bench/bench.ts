/**
 * npm run bench: our server side by side with the physical ceiling (the same
 * bytes replayed from memory) and the naive way (scan the archive and
 * JSON.stringify on every request), over the full archive, on loopback, driven
 * by wrk. Prints one table of medians and writes it to bench/results.md.
 *
 * Environment: ARCHIVE_SOURCE (default /work/shared/data/oscars.csv),
 * BENCH_SECONDS per run (default 4), BENCH_REPEATS (default 3),
 * BENCH_CONNECTIONS (default 32), BENCH_ONLY (comma-separated workload ids),
 * BENCH_PROFILE=1 to also run ours once more under --cpu-prof (profiles go to a temp folder).
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { build } from '../build/build.ts';
import { Keys } from '../src/keys.ts';
import { SqliteKeyBackend } from '../src/server/sqlite-keys.node.ts';
import { captureKey, type Captured } from './server.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const SOURCE = process.env.ARCHIVE_SOURCE ?? '/work/shared/data/oscars.csv';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const WARMUP_SECONDS = 1;
const EDGE_FUNCTION = path.join(ROOT, 'netlify/edge-functions/api.ts');

type ServerName = 'ceiling' | 'ours' | 'naive';
const SERVERS: ServerName[] = ['ceiling', 'ours', 'naive'];

interface Workload {
  id: string;
  label: string;
  /** Path with `{key}` where the key goes. */
  path: string;
  acceptEncoding?: string;
  /** The status every answer must have. */
  status: number;
  /** Least ours/ceiling ratio. */
  ceilingTarget: number;
  /** Least ours/naive ratio, where the lookup spans all ceremonies. */
  naiveTarget?: number;
}

const WORKLOADS: Workload[] = [
  { id: 'archive', label: 'whole archive (identity)', path: '/archive/apikey={key}', status: 200, ceilingTarget: 0.9 },
  { id: 'archive-br', label: 'whole archive (br)', path: '/archive/apikey={key}', acceptEncoding: 'br', status: 200, ceilingTarget: 0.9 },
  { id: 'year', label: 'one year (2000)', path: '/archive/year=2000/apikey={key}', status: 200, ceilingTarget: 0.9 },
  { id: 'person', label: 'person: Meryl Streep', path: '/person/name=Meryl%20Streep/apikey={key}', status: 200, ceilingTarget: 0.9, naiveTarget: 10 },
  { id: 'company', label: 'company: Metro-Goldwyn-Mayer', path: '/person/name=Metro-Goldwyn-Mayer/apikey={key}', status: 200, ceilingTarget: 0.9, naiveTarget: 10 },
  { id: 'film', label: 'film at a year: Sinners 2026', path: '/movie/name=Sinners/year=2026/apikey={key}', status: 200, ceilingTarget: 0.9 },
  { id: 'actor', label: 'category across years: Actor', path: '/award/name=Actor/apikey={key}', status: 200, ceilingTarget: 0.5, naiveTarget: 10 },
  { id: 'category-year', label: 'category at a year: Best Picture 2026', path: '/award/name=Best%20Picture/year=2026/apikey={key}', status: 200, ceilingTarget: 0.9 },
  { id: '404', label: '404 person', path: '/person/name=Nobody%20Atall%20Xyzzy/apikey={key}', status: 404, ceilingTarget: 0.9 },
  { id: '403', label: '403 bad key', path: '/person/name=Meryl%20Streep/apikey=faa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', status: 403, ceilingTarget: 0.9 },
];

interface RunResult {
  /** Answers per second with the workload's expected status (2xx for data workloads). */
  rps: number;
  p50: number;
  p99: number;
  /** Answers with another status, or socket errors. */
  unexpected: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function get(port: number, url: string, acceptEncoding?: string): Promise<{ status: number; encoding: string | null; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: url, headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, encoding: (res.headers['content-encoding'] as string | undefined) ?? null, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

interface Started {
  child: ChildProcess;
  port: number;
  spawnedAt: number;
}

function startServer(mode: ServerName, env: Record<string, string>, nodeArgs: string[] = []): Promise<Started> {
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(ROOT, 'bench/server.ts'), mode], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]), spawnedAt });
    });
    child.on('exit', (code) => reject(new Error(`${mode} server exited with ${code} before listening`)));
  });
}

function stopServer(s: Started): Promise<void> {
  return new Promise((resolve) => {
    if (s.child.exitCode !== null) return resolve();
    s.child.once('exit', () => resolve());
    s.child.kill('SIGTERM');
    setTimeout(() => s.child.kill('SIGKILL'), 3000).unref();
  });
}

/** VmRSS and VmHWM of a process, in MiB, from /proc. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

const LUA = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("WRK {\\"requests\\":%d,\\"duration\\":%d,\\"status\\":%d,\\"socket\\":%d,\\"p50\\":%d,\\"p99\\":%d}\\n",
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;

/** One wrk run: one thread (the other core serves), CONNECTIONS connections. */
function wrk(url: string, seconds: number, expected: number, acceptEncoding: string | undefined, script: string): RunResult {
  const args = ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--timeout', '10s', '-s', script];
  if (acceptEncoding) args.push('-H', `Accept-Encoding: ${acceptEncoding}`);
  args.push(url);
  const out = execFileSync('wrk', args, { encoding: 'utf8', maxBuffer: 1 << 20 });
  const line = /WRK (\{.*\})/.exec(out);
  if (!line) throw new Error(`no wrk summary in:\n${out}`);
  const r = JSON.parse(line[1]) as { requests: number; duration: number; status: number; socket: number; p50: number; p99: number };
  // wrk counts answers outside 2xx/3xx as status errors: for the 404 and 403 workloads those are the expected answers.
  const good = expected < 400 ? r.requests - r.status : r.status;
  return {
    rps: good / (r.duration / 1e6),
    p50: r.p50 / 1000,
    p99: r.p99 / 1000,
    unexpected: r.requests - good + r.socket,
  };
}

/**
 * Waits until the server answers a small request promptly: a server busy with
 * requests queued by the last run (the naive one, on big bodies) must not
 * bleed into the next measurement.
 */
async function drain(port: number, url: string): Promise<void> {
  const deadline = performance.now() + 120_000;
  while (performance.now() < deadline) {
    const started = performance.now();
    await get(port, url).catch(() => null);
    if (performance.now() - started < 50) return;
  }
}

/** Spawn to first 200 on a data route, in ms. */
async function coldStart(mode: ServerName, env: Record<string, string>, url: string): Promise<number> {
  const s = await startServer(mode, env);
  try {
    for (;;) {
      const r = await get(s.port, url).catch(() => null);
      if (r?.status === 200) return performance.now() - s.spawnedAt;
      await new Promise((r) => setTimeout(r, 2));
    }
  } finally {
    await stopServer(s);
  }
}

/**
 * The edge function under Deno, behind the tests' CDN stand-in
 * (test/edge/serve-edge.ts) with a local Blobs server holding the key:
 * spawn to first 200, median of 3, or why it cannot be measured.
 */
async function edgeColdStart(dist: string, tmp: string, url: string): Promise<string> {
  if (!existsSync(EDGE_FUNCTION)) return `TODO: ${path.relative(ROOT, EDGE_FUNCTION)} does not exist yet; not measured`;
  const { BlobsServer } = await import('@netlify/blobs/server');
  const { portalKeys } = await import('../src/keys-blobs.ts');
  const { startEdge } = await import('../test/helpers.ts');
  const token = 'bench-token';
  const blobs = new BlobsServer({ directory: path.join(tmp, 'blobs'), token });
  const { port } = await blobs.start();
  try {
    const access = { siteID: 'bench-site', token, edgeURL: `http://127.0.0.1:${port}`, uncachedEdgeURL: `http://127.0.0.1:${port}` };
    const key = await portalKeys(access).issue('bench-edge@example.org');
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      const edge = await startEdge(dist, { NETLIFY_BLOBS_CONTEXT: Buffer.from(JSON.stringify(access)).toString('base64') });
      try {
        for (let tries = 0; ; tries++) {
          const r = await get(edge.port, url.replace('{key}', key)).catch(() => null);
          if (r?.status === 200) break;
          if (tries > 5000) return `edge function under Deno never answered 200 (last: ${r?.status})`;
          await new Promise((r) => setTimeout(r, 2));
        }
        times.push(performance.now() - started);
      } finally {
        await edge.stop();
      }
    }
    return `${fmt(median(times))} ms (median of 3: ${times.map((t) => fmt(t)).join(', ')}; spawn of \`deno run test/edge/serve-edge.ts\` to first 200 on /person/, keys from a local Blobs server)`;
  } finally {
    await blobs.stop();
  }
}

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

async function main() {
  const only = process.env.BENCH_ONLY?.split(',');
  const workloads = only ? WORKLOADS.filter((w) => only.includes(w.id)) : WORKLOADS;
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'faa-bench-'));
  const cleanup = () => rmSync(tmp, { recursive: true, force: true });
  process.on('exit', cleanup);
  const dist = path.join(tmp, 'dist');
  const keysDb = path.join(tmp, 'keys.db');
  const script = path.join(tmp, 'report.lua');
  writeFileSync(script, LUA);

  console.log(`building the full archive from ${SOURCE} into ${dist} ...`);
  const buildStarted = performance.now();
  const built = await build({ source: SOURCE, out: dist, summary: path.join(tmp, 'summary.json'), log: () => {} });
  const buildMs = performance.now() - buildStarted;
  if (built.sample) throw new Error('the benchmark needs the full archive, not the sample');

  const keyStore = new SqliteKeyBackend(keysDb, { view: false });
  const key = await new Keys(keyStore).issue('bench@example.org');
  keyStore.close();
  const env = { DIST: dist, KEYS_DB: keysDb, RATE_LIMIT_PER_MINUTE: '100000000', LOG_REQUESTS: '0', ARCHIVE_SOURCE: SOURCE };
  const urlOf = (w: Workload) => w.path.replace('{key}', key);

  // What ours answers, byte for byte: the ceiling replays it, the naive server must match it.
  const ours0 = await startServer('ours', env);
  const captured: Record<string, Captured> = {};
  const identity = new Map<string, Buffer>();
  for (const w of workloads) {
    const r = await get(ours0.port, urlOf(w), w.acceptEncoding);
    if (r.status !== w.status) throw new Error(`${w.id}: ours answered ${r.status}, expected ${w.status}`);
    captured[captureKey(urlOf(w), w.acceptEncoding)] = { status: r.status, encoding: r.encoding, body: r.body.toString('base64') };
    identity.set(w.id, (await get(ours0.port, urlOf(w))).body);
  }
  await stopServer(ours0);
  const captureFile = path.join(tmp, 'captured.json');
  writeFileSync(captureFile, JSON.stringify(captured));

  const results: Record<ServerName, Record<string, RunResult[]>> = { ceiling: {}, ours: {}, naive: {} };
  const memory: Partial<Record<ServerName, { rss: number; peak: number }>> = {};
  const sameBodies: string[] = [];
  // All three listen at once (an idle server costs nothing); each workload runs on each server in
  // turn, repetition by repetition, so a slow spell of the shared machine hits all three alike.
  const running = {} as Record<ServerName, Started>;
  for (const name of SERVERS) running[name] = await startServer(name, { ...env, CAPTURE_FILE: captureFile });
  for (const w of workloads) {
    const r = await get(running.naive.port, urlOf(w));
    if (!r.body.equals(identity.get(w.id)!)) sameBodies.push(w.id);
  }
  const probe = WORKLOADS.find((x) => x.id === '403')!.path;
  for (const w of workloads) {
    const url = (name: ServerName) => `http://127.0.0.1:${running[name].port}${urlOf(w)}`;
    for (const name of SERVERS) {
      wrk(url(name), WARMUP_SECONDS, w.status, w.acceptEncoding, script);
      await drain(running[name].port, probe);
      results[name][w.id] = [];
    }
    for (let i = 0; i < REPEATS; i++) {
      for (const name of SERVERS) {
        results[name][w.id].push(wrk(url(name), SECONDS, w.status, w.acceptEncoding, script));
        await drain(running[name].port, probe);
      }
    }
    for (const name of SERVERS) {
      const runs = results[name][w.id];
      console.log(`  ${name.padEnd(7)} ${w.id.padEnd(14)} ${fmt(median(runs.map((r) => r.rps)))} req/s  [${runs.map((r) => fmt(r.rps)).join(', ')}]${runs.some((r) => r.unexpected) ? `  unexpected: ${runs.map((r) => r.unexpected).join(', ')}` : ''}`);
    }
  }
  for (const name of SERVERS) {
    memory[name] = memoryOf(running[name].child.pid!);
    await stopServer(running[name]);
  }

  console.log('cold starts ...');
  const firstUrl = urlOf(WORKLOADS.find((w) => w.id === 'person')!);
  const colds: number[] = [];
  for (let i = 0; i < 3; i++) colds.push(await coldStart('ours', env, firstUrl));
  const edge = await edgeColdStart(dist, tmp, WORKLOADS.find((w) => w.id === 'person')!.path);

  if (process.env.BENCH_PROFILE === '1') {
    const profDir = path.join(os.tmpdir(), `faa-bench-profiles-${Date.now()}`);
    const s = await startServer('ours', env, ['--cpu-prof', `--cpu-prof-dir=${profDir}`]);
    for (const w of workloads) wrk(`http://127.0.0.1:${s.port}${urlOf(w)}`, 2, w.status, w.acceptEncoding, script);
    await stopServer(s);
    console.log(`profile written to ${profDir}: ${readdirSync(profDir).join(', ')}`);
  }

  const cpu = os.cpus();
  const lines: string[] = [];
  lines.push(`# Benchmark results`, '');
  lines.push(
    `${new Date().toISOString().slice(0, 16)}Z, Node ${process.version}, ${cpu.length} × ${cpu[0]?.model.trim() ?? 'cpu'}. ` +
      `wrk, 1 thread, ${CONNECTIONS} connections, ${SECONDS} s per run after ${WARMUP_SECONDS} s warm-up, median of ${REPEATS} runs interleaved across the three servers, loopback. ` +
      `**The ${cpu.length} cores are shared by the load generator and the server** (and anything else running on the machine), so absolute numbers are low and noisy; the ratios are the point.`,
  );
  lines.push('');
  lines.push(
    `Throughput counts only answers with the expected status: 2xx for data (a 403 or 429 proves nothing), the 404 / 403 itself for the two error rows. ` +
      `Latencies in ms. ceiling = our exact bytes replayed from a Map; naive = archive in memory, scanned and JSON.stringify'd per request (brotli quality 4 on the fly for br).`,
  );
  lines.push('');
  lines.push('| workload | ceiling req/s | ours req/s | naive req/s | ceiling p50 / p99 | ours p50 / p99 | naive p50 / p99 | ours / ceiling | ours / naive | target | met? |');
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|');
  let missed = 0;
  for (const w of workloads) {
    const m = (name: ServerName, f: keyof RunResult) => median(results[name][w.id].map((r) => r[f]));
    const rc = m('ours', 'rps') / m('ceiling', 'rps');
    const rn = m('ours', 'rps') / m('naive', 'rps');
    const okCeiling = rc >= w.ceilingTarget;
    const okNaive = w.naiveTarget === undefined || rn >= w.naiveTarget;
    if (!okCeiling || !okNaive) missed++;
    const target = `≥${w.ceilingTarget}× ceiling${w.naiveTarget ? `, ≥${w.naiveTarget}× naive` : ''}`;
    const verdict = okCeiling && okNaive ? 'met' : `**missed** (${[!okCeiling && 'ceiling', !okNaive && 'naive'].filter(Boolean).join(', ')})`;
    const lat = (name: ServerName) => `${fmt(m(name, 'p50'), 2)} / ${fmt(m(name, 'p99'), 2)}`;
    lines.push(
      `| ${w.label}${w.status !== 200 ? ` (${w.status}/s)` : ''} | ${fmt(m('ceiling', 'rps'))} | ${fmt(m('ours', 'rps'))} | ${fmt(m('naive', 'rps'))} | ${lat('ceiling')} | ${lat('ours')} | ${lat('naive')} | ${fmt(rc, 2)}× | ${fmt(rn, 1)}× | ${target} | ${verdict} |`,
    );
  }
  lines.push('');
  const mem = (name: ServerName) => (memory[name] ? `${fmt(memory[name].rss, 1)} MiB (peak ${fmt(memory[name].peak, 1)} MiB)` : '-');
  lines.push(`- Build time of the full archive (${path.basename(SOURCE)}, ${built.files} files): ${fmt(buildMs / 1000, 2)} s`);
  lines.push(`- Cold start, Node server (spawn of \`node --import tsx bench/server.ts ours\` to first 200 on /person/): ${fmt(median(colds))} ms (median of 3: ${colds.map((c) => fmt(c)).join(', ')})`);
  lines.push(`- Cold start, edge function under Deno: ${edge}`);
  lines.push(`- Server memory after the run (VmRSS from /proc/<pid>/status): ours ${mem('ours')}; ceiling ${mem('ceiling')}; naive ${mem('naive')}`);
  lines.push(`- Naive bodies identical to ours (identity): ${sameBodies.length === 0 ? 'yes, every workload' : `NO for ${sameBodies.join(', ')}`}`);
  lines.push(`- Targets: ${workloads.length - missed} of ${workloads.length} rows met.`);
  const table = lines.join('\n');
  console.log(`\n${table}`);
  writeFileSync(path.join(ROOT, 'bench/results.md'), `${table}\n`);
}

await main();
