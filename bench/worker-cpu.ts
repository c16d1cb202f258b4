/**
 * CPU time of the Cloudflare Worker per request, in workerd, cold and warm:
 * `npm run dev:cloudflare` over a build, and for each of the heaviest lookups
 * (the whole archive, the widest category join `/award/name=e`, the name with
 * the most nominations) a fresh workerd whose first request is the lookup
 * (cold: module loaded, nothing read yet), then 200 more (warm). Workers give
 * a request 10 ms of CPU on the free plan.
 *
 *   node bench/worker-cpu.ts <dist> [runs per lookup, default 3]
 *
 * CPU is read from /proc (`schedstat` of every thread of the workerd
 * processes, nanoseconds) around each request: it counts the asset server,
 * wrangler's proxy and the inspector wrangler dev attaches inside workerd too,
 * so it is an upper bound; the first row, a refused key, shows that floor. The key is
 * had through the portal, its mail read from dev:cloudflare's outbox, as a
 * person does. Prints one JSON line per run, then a Markdown table.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const [dist, runsText = '3'] = process.argv.slice(2);
if (!dist) {
  console.error('usage: node bench/worker-cpu.ts <dist> [runs per lookup]');
  process.exit(2);
}
const WARM_RUNS = 200;

async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Worker {
  base: string;
  child: ChildProcess;
  output: () => string;
}

/** dev:cloudflare over `dist` with its state in `state`; resolves once wrangler says it is ready (no request sent yet). */
async function start(state: string): Promise<Worker> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(ROOT, 'cli/cloudflare-dev.ts')], {
    cwd: ROOT,
    env: { ...process.env, DIST_DIR: dist, PORT: String(port), CLOUDFLARE_LOCAL_DIR: state, PORTAL_ISSUE_LIMIT_PER_MINUTE: '1000', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout!.on('data', (c) => (output += c));
  child.stderr!.on('data', (c) => (output += c));
  const deadline = Date.now() + 180_000;
  while (!output.includes('Ready on')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`dev:cloudflare did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { base: `http://127.0.0.1:${port}`, child, output: () => output };
}

async function stop(worker: Worker): Promise<void> {
  if (worker.child.exitCode !== null) return;
  const exited = new Promise((resolve) => worker.child.once('exit', resolve));
  process.kill(-worker.child.pid!, 'SIGTERM');
  await exited;
}

/** The pids of the workerd processes below `pid`. */
async function workerdPids(pid: number): Promise<number[]> {
  const children = new Map<number, number[]>();
  const names = new Map<number, string>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const m = /^(\d+) \((.*)\) \S (\d+)/.exec(stat);
    if (!m) continue;
    names.set(Number(m[1]), m[2]);
    children.set(Number(m[3]), [...(children.get(Number(m[3])) ?? []), Number(m[1])]);
  }
  const found: number[] = [];
  const visit = (p: number) => {
    for (const c of children.get(p) ?? []) {
      if (names.get(c)?.startsWith('workerd')) found.push(c);
      visit(c);
    }
  };
  visit(pid);
  return found;
}

/** CPU nanoseconds of every thread of `pids` so far. */
async function cpuNs(pids: number[]): Promise<number> {
  let total = 0;
  for (const pid of pids) {
    for (const task of await readdir(`/proc/${pid}/task`).catch(() => [])) {
      const text = await readFile(`/proc/${pid}/task/${task}/schedstat`, 'utf8').catch(() => '0');
      total += Number(text.split(' ')[0]);
    }
  }
  return total;
}

/** A key through the portal: the link is read from the mail dev:cloudflare's outbox prints. */
async function portalKey(worker: Worker): Promise<string> {
  const post = async (p: string, body?: object, session?: string) => {
    const headers: Record<string, string> = { ...(body ? { 'content-type': 'application/json' } : {}), ...(session ? { authorization: `Bearer ${session}` } : {}) };
    return (await (await fetch(`${worker.base}${p}`, { method: 'POST', headers, body: body ? JSON.stringify(body) : undefined })).json()) as Record<string, string>;
  };
  await post('/portal/sign-in', { email: 'bench-worker@example.org' });
  let token: string | undefined;
  for (let i = 0; i < 50 && !token; i++) {
    token = /#token=(fat_[A-Za-z0-9_-]{43})/.exec(worker.output())?.[1];
    await new Promise((r) => setTimeout(r, 100));
  }
  const { session } = await post('/portal/session', { token });
  return (await post('/portal/keys', undefined, session)).apiKey;
}

/** The name (person or company) in the most nominations, from the whole archive. */
function topName(archive: Record<string, { nominations: { primary: string[]; secondary?: string[] }[] }[]>): string {
  const counts = new Map<string, number>();
  for (const categories of Object.values(archive)) {
    for (const c of categories) for (const n of c.nominations) for (const name of new Set([...n.primary, ...(n.secondary ?? [])])) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1])[0][0];
}

async function measure(worker: Worker, pids: number[], url: string): Promise<{ ms: number; status: number }> {
  const before = await cpuNs(pids);
  const response = await fetch(url);
  await response.arrayBuffer();
  return { ms: ((await cpuNs(pids)) - before) / 1e6, status: response.status };
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

async function main() {
  const state = await mkdtemp(path.join(os.tmpdir(), 'faa-worker-cpu-'));
  try {
    const first = await start(state);
    const key = await portalKey(first);
    const archive = await (await fetch(`${first.base}/archive/apikey=${key}`)).json();
    await stop(first);
    // The first row is the floor: a refused key costs the Worker next to nothing, so its CPU is workerd's and wrangler's own per request.
    const lookups = ['/archive/year=2000/apikey=faa_nope', '/archive', '/award/name=e', `/person/name=${encodeURIComponent(topName(archive))}`];
    const rows: string[] = [];
    for (const lookup of lookups) {
      const colds: number[] = [];
      const warms: number[] = [];
      for (let run = 0; run < Number(runsText); run++) {
        const worker = await start(state);
        const pids = await workerdPids(worker.child.pid!);
        const url = lookup.includes('/apikey=') ? `${worker.base}${lookup}` : `${worker.base}${lookup}/apikey=${key}`;
        const cold = await measure(worker, pids, url);
        const warm: number[] = [];
        for (let i = 0; i < WARM_RUNS; i++) warm.push((await measure(worker, pids, url)).ms);
        await stop(worker);
        colds.push(cold.ms);
        warms.push(...warm);
        console.log(JSON.stringify({ lookup, status: cold.status, cold: cold.ms, warmMedian: quantile(warm, 0.5), warmP99: quantile(warm, 0.99) }));
      }
      const fmt = (x: number) => x.toFixed(2);
      rows.push(`| ${decodeURIComponent(lookup)} | ${colds.map(fmt).join(', ')} | ${fmt(quantile(warms, 0.5))} | ${fmt(quantile(warms, 0.99))} |`);
    }
    console.log(['', '| lookup | cold (fresh workerd each) | warm median | warm p99 |', '|---|---:|---:|---:|', ...rows].join('\n'));
  } finally {
    await rm(state, { recursive: true, force: true });
  }
}

await main();
