/**
 * CPU time of the Cloudflare Worker per request, in workerd, cold and warm.
 * The Worker is bundled as a deploy bundles it (`wrangler deploy --dry-run`),
 * its D1 migrated as a user migrates it (`wrangler d1 migrations apply
 * --local`), and run by Miniflare (workerd, no inspector, no dev proxy). For
 * each of the heaviest lookups (the whole archive, the widest category join
 * `/award/name=e`, the name in the most nominations), each run is a fresh
 * workerd whose first request is the lookup (cold: the module loaded, nothing
 * read yet), then 200 more (warm). Workers give a request 10 ms of CPU on the
 * free plan.
 *
 *   node bench/worker-cpu.ts <dist> [runs per lookup, default 3]
 *
 * CPU is read from /proc (`schedstat` of every thread of workerd, in
 * nanoseconds) around each request, so it also counts what the platform does
 * outside the Worker: Miniflare's entry worker, and the copy of each answer
 * to this process. The assets binding is served from this process's memory,
 * as a CDN serves it, its own CPU not counted. The first row, a refused key,
 * is that floor. Answers are asked for uncompressed (`Accept-Encoding:
 * identity`): Cloudflare compresses outside the Worker, Miniflare inside
 * workerd. Prints one JSON line per run, then a Markdown table.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { convertV4MiniflareOptions, Miniflare } from 'miniflare';
import { localConfig, WRANGLER } from '../cli/wrangler.ts';
import { d1Keys, type D1DatabaseLike } from '../src/keys-d1.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const [distArg, runsText = '3'] = process.argv.slice(2);
if (!distArg) {
  console.error('usage: node bench/worker-cpu.ts <dist> [runs per lookup]');
  process.exit(2);
}
const dist = path.resolve(distArg);
const WARM_RUNS = 200;

function wrangler(args: string[], cwd: string): void {
  const out = spawnSync(process.execPath, [WRANGLER, ...args], { cwd, encoding: 'utf8', env: { ...process.env, CI: '1', WRANGLER_SEND_METRICS: 'false', WRANGLER_LOG_PATH: path.join(cwd, 'logs') } });
  if (out.status !== 0) throw new Error(`wrangler ${args.join(' ')} failed:\n${out.stdout}\n${out.stderr}`);
}

async function filesOf(dir: string): Promise<Map<string, Uint8Array>> {
  const files = new Map<string, Uint8Array>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) files.set(`/${path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/')}`, await readFile(path.join(entry.parentPath, entry.name)));
  }
  return files;
}

/** The workerd processes this process started. */
async function workerdPids(): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    const m = /^(\d+) \((.*)\) \S (\d+)/.exec(await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => ''));
    if (m && m[2].startsWith('workerd') && Number(m[3]) === process.pid) found.push(Number(m[1]));
  }
  return found;
}

/** CPU nanoseconds of every thread of `pids` so far. */
async function cpuNs(pids: number[]): Promise<number> {
  let total = 0;
  for (const pid of pids) {
    for (const task of await readdir(`/proc/${pid}/task`).catch(() => [])) total += Number((await readFile(`/proc/${pid}/task/${task}/schedstat`, 'utf8').catch(() => '0')).split(' ')[0]);
  }
  return total;
}

/** The name (person or company) in the most nominations, from the whole archive. */
function topName(archive: Record<string, { nominations: { primary: string[]; secondary?: string[] }[] }[]>): string {
  const counts = new Map<string, number>();
  for (const categories of Object.values(archive)) {
    for (const c of categories) for (const n of c.nominations) for (const name of new Set([...n.primary, ...(n.secondary ?? [])])) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1])[0][0];
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

async function main() {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'faa-worker-cpu-'));
  try {
    const config = localConfig(dist, tmp);
    const { compatibility_date: compatibilityDate, d1_databases: [d1] } = JSON.parse(await readFile(config, 'utf8'));
    wrangler(['d1', 'migrations', 'apply', 'DB', '--local', '--config', config, '--persist-to', path.join(tmp, 'state')], tmp);
    wrangler(['deploy', '--dry-run', '--config', config, '--outdir', path.join(tmp, 'bundle')], tmp);
    const files = await filesOf(dist);
    const assets = async (request: Request) => {
      const bytes = files.get(new URL(request.url).pathname);
      return bytes ? new Response(bytes as Uint8Array<ArrayBuffer>) : new Response('Not Found', { status: 404 });
    };
    const start = () =>
      new Miniflare(
        convertV4MiniflareOptions({
          name: 'api',
          modules: true,
          modulesRoot: path.join(tmp, 'bundle'),
          scriptPath: path.join(tmp, 'bundle', 'cloudflare.js'),
          compatibilityDate,
          cf: false,
          d1Databases: { DB: d1.database_id },
          resourcePersistencePath: path.join(tmp, 'state', 'v3'),
          bindings: { RATE_LIMIT_PER_MINUTE: '1000000000' },
          serviceBindings: { ASSETS: assets },
        }),
      );
    const first = start();
    const key = await d1Keys((await first.getD1Database('DB')) as unknown as D1DatabaseLike).issue('bench-worker@example.org');
    const archive = await (await first.dispatchFetch(`http://localhost/archive/apikey=${key}`)).json();
    await first.dispose();
    const lookups = ['/archive/year=2000/apikey=faa_nope', '/archive', '/award/name=e', `/person/name=${encodeURIComponent(topName(archive as never))}`];
    const rows: string[] = [];
    for (const lookup of lookups) {
      const url = `http://localhost${lookup}${lookup.includes('/apikey=') ? '' : `/apikey=${key}`}`;
      const colds: number[] = [];
      const warms: number[] = [];
      for (let run = 0; run < Number(runsText); run++) {
        const mf = start();
        await mf.ready;
        const pids = await workerdPids();
        const once = async () => {
          const before = await cpuNs(pids);
          const response = await mf.dispatchFetch(url, { headers: { 'accept-encoding': 'identity' } });
          await response.arrayBuffer();
          return { ms: ((await cpuNs(pids)) - before) / 1e6, status: response.status };
        };
        const cold = await once();
        const warm: number[] = [];
        for (let i = 0; i < WARM_RUNS; i++) warm.push((await once()).ms);
        await mf.dispose();
        colds.push(cold.ms);
        warms.push(...warm);
        console.log(JSON.stringify({ lookup, status: cold.status, cold: cold.ms, warmMedian: quantile(warm, 0.5), warmP99: quantile(warm, 0.99) }));
      }
      const fmt = (x: number) => x.toFixed(1);
      rows.push(`| ${decodeURIComponent(lookup)} | ${colds.map(fmt).join(', ')} | ${fmt(quantile(warms, 0.5))} | ${fmt(quantile(warms, 0.99))} |`);
    }
    console.log(['', '| lookup | cold (fresh workerd each), ms | warm median | warm p99 |', '|---|---:|---:|---:|', ...rows].join('\n'));
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

await main();
