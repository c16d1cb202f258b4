/**
 * CPU time of the Cloudflare Worker per request, in workerd, cold and warm.
 * The Worker is bundled as a deploy bundles it (`wrangler deploy --dry-run`),
 * its D1 migrated as a user migrates it (`wrangler d1 migrations apply
 * --local`), and run by Miniflare (workerd, no inspector, no dev proxy). For
 * each of the heaviest lookups (the whole archive, the widest category join
 * `/award/name=e`, and at one year, the name in the most nominations, three searches, three records, a ranking
 * made at run time and a stored one), each run is a fresh
 * workerd whose first request is the lookup (cold: the module loaded with the
 * build files it carries, adapters/_cloudflare/worker-bundle.node.ts, nothing
 * read yet), then 200 more (warm). Workers give a request 10 ms of CPU on the
 * free plan.
 *
 *   npm run bench:worker -- <dist> [runs per lookup, default 3] [only lookups containing this text]
 *
 * CPU is read from /proc (`schedstat` of every thread of workerd, in
 * nanoseconds) around each request, so it also counts what the platform does
 * outside the Worker: Miniflare's entry worker, the local D1 (a Durable
 * Object and SQLite inside the same workerd; on Cloudflare a D1 query is I/O
 * the Worker waits for), and moving each answer into and out of workerd.
 * workerd reports no CPU per isolate (a Tail Worker's `cpuTime` is 0 there),
 * so the bench also runs a reference Worker that does only the platform's
 * part of the same request: one D1 read of the key as the key store reads
 * it, the exact bytes of the answer passed through from the assets binding
 * (for the refused key, a fixed 403), and one console line as long as our
 * access line (a console line costs workerd 2 to 5 ms on a fresh isolate,
 * most of it Miniflare carrying it to its Node process; Cloudflare writes
 * logs outside the isolate). Ours minus the reference, run for run (each in
 * a fresh workerd), is the CPU our Worker's own code takes.
 * The assets binding is served from this process's memory, as a CDN serves
 * it, its own CPU not counted. The first row, a key refused by its shape,
 * is the floor. Answers are asked for uncompressed (`Accept-Encoding:
 * identity`): Cloudflare compresses outside the Worker, Miniflare inside
 * workerd. Prints one JSON line per run, then a Markdown table, then the
 * CPU each workerd took to start (ours evaluates its module, parses the
 * files it carries and readies its search: adapters/cloudflare.ts), which
 * Cloudflare limits apart from a request's.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { convertV4MiniflareOptions, Miniflare } from 'miniflare';
import { commandLine, refuser } from '../lib/command-line.ts';
import { workerConfig, WRANGLER } from '../cli/lib/wrangler.ts';
import { d1Keys, type D1DatabaseLike } from '../adapters/_cloudflare/d1-keys.ts';
import { hashSecret } from '../src/keys/secrets.ts';
import { keySql } from '../src/keys/stores/sql.ts';

const USAGE = `usage: npm run bench:worker -- DIST [RUNS] [TEXT]

The Cloudflare Worker's own CPU per request in workerd, cold (a fresh workerd
for each run) and warm, for the heaviest lookups and three searches, beside a
reference Worker that does only the platform's part of each request (see the
top of bench/worker-cpu.ts). Prints one JSON line per run, then a table.

  DIST    the built output to serve, e.g. dist (npm run build first)
  RUNS    fresh workerds per lookup (default 3)
  TEXT    only the lookups whose path contains this text (e.g. search)

Options:
  -h, --help   this text`;
const { positionals } = commandLine({ name: 'bench:worker', usage: USAGE, options: {}, positionals: 3 });
const [distArg, runsText = '3', only = ''] = positionals;
if (!distArg) refuser('bench:worker')('name the built output to serve: npm run bench:worker -- dist', 2);
const dist = path.resolve(distArg);
const WARM_RUNS = 200;

function wrangler(args: string[], cwd: string): void {
  const out = spawnSync(process.execPath, [WRANGLER, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, CI: '1', WRANGLER_SEND_METRICS: 'false', WRANGLER_LOG_PATH: path.join(cwd, 'logs') },
  });
  if (out.status !== 0) throw new Error(`wrangler ${args.join(' ')} failed:\n${out.stdout}\n${out.stderr}`);
}

async function filesOf(dir: string): Promise<Map<string, Uint8Array>> {
  const files = new Map<string, Uint8Array>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile())
      files.set(
        `/${path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/')}`,
        await readFile(path.join(entry.parentPath, entry.name)),
      );
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
    for (const task of await readdir(`/proc/${pid}/task`).catch(() => []))
      total += Number((await readFile(`/proc/${pid}/task/${task}/schedstat`, 'utf8').catch(() => '0')).split(' ')[0]);
  }
  return total;
}

/** The name (person or company) in the most nominations, from the whole archive. */
function topName(archive: Record<string, { nominations: { primary: string[]; secondary?: string[] }[] }[]>): string {
  const counts = new Map<string, number>();
  for (const categories of Object.values(archive)) {
    for (const c of categories)
      for (const n of c.nominations)
        for (const name of new Set([...n.primary, ...(n.secondary ?? [])]))
          counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1])[0][0];
}

const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

/**
 * The platform's part of a request and nothing else: the key's D1 read (the
 * statement the key store runs, its hash computed here beforehand), then the
 * answer's bytes streamed through from the assets binding, and a console line
 * as long as our access line. A key refused by its shape is answered with a
 * fixed 403, as the store is never asked.
 */
const REFERENCE_WORKER = `export default {
  async fetch(request, env) {
    console.log(env.LOG_LINE);
    if (!env.ANSWER_PATH) return new Response('{"error":"Forbidden - Invalid API Key"}', { status: 403, headers: { 'content-type': 'application/json; charset=utf-8' } });
    const live = await env.DB.prepare(env.KEY_SQL).bind(env.KEY_HASH).first();
    if (!live) return new Response('forbidden', { status: 403 });
    const asset = await env.ASSETS.fetch(new Request(new URL(env.ANSWER_PATH, request.url)));
    return new Response(asset.body, { headers: { 'content-type': 'application/json; charset=utf-8' } });
  },
};`;

interface Run {
  /** CPU from workerd's launch until it is ready: the runtime, Miniflare's own Workers, and the Worker's module evaluated. */
  startup: number;
  cold: number;
  warm: number[];
  status: number;
}

async function main() {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'faa-worker-cpu-'));
  try {
    const config = workerConfig(dist, tmp);
    const {
      compatibility_date: compatibilityDate,
      d1_databases: [d1],
    } = JSON.parse(await readFile(config, 'utf8'));
    wrangler(
      ['d1', 'migrations', 'apply', 'DB', '--local', '--config', config, '--persist-to', path.join(tmp, 'state')],
      tmp,
    );
    wrangler(['deploy', '--dry-run', '--config', config, '--outdir', path.join(tmp, 'bundle')], tmp);
    const files = await filesOf(dist);
    const assets = async (request: Request) => {
      const bytes = files.get(new URL(request.url).pathname);
      return bytes ? new Response(bytes as Uint8Array<ArrayBuffer>) : new Response('Not Found', { status: 404 });
    };
    const common = {
      name: 'api',
      modules: true,
      compatibilityDate,
      cf: false,
      d1Databases: { DB: d1.database_id },
      resourcePersistencePath: path.join(tmp, 'state', 'v3'),
      serviceBindings: { ASSETS: assets },
    };
    const ours = () =>
      new Miniflare(
        convertV4MiniflareOptions({
          ...common,
          modulesRoot: path.join(tmp, 'bundle'),
          scriptPath: path.join(tmp, 'bundle', 'cloudflare.js'),
          bindings: { RATE_LIMIT_PER_MINUTE: '1000000000' },
        }),
      );
    const first = ours();
    const key = await d1Keys((await first.getD1Database('DB')) as unknown as D1DatabaseLike).issue(
      'bench-worker@example.org',
    );
    const archive = await (await first.dispatchFetch(`http://localhost/archive/apikey=${key}`)).json();
    const lookups = [
      '/archive/year=2000/apikey=faa_nope',
      '/archive',
      '/award/name=e',
      // The widest join at one year: every category used in 2000 holds an e.
      '/award/name=e/year=2000',
      `/person/name=${encodeURIComponent(topName(archive as never))}`,
      // Searches scan the whole index on a fresh isolate: a typo, a typo in a long name, and the start of words.
      '/search/name=meryl%20strep',
      '/search/name=oppenhiemer',
      '/search/name=emma%20st',
      // Records: a film's, a person's (one pack of records and the shards' pack), and the largest award's.
      '/film/id=tt0120338',
      '/people/id=nm0000658',
      '/awards/id=best-picture',
      // Rankings: one made at run time from the rankings' table (a span of years), and one the build stored (all years).
      '/rankings/of=people/by=wins/class=Acting/from=2000',
      '/rankings/of=films/class=competitive',
    ];
    const urlOf = (lookup: string) => `http://localhost${lookup}${lookup.includes('/apikey=') ? '' : `/apikey=${key}`}`;
    const references = new Map<string, () => Miniflare>();
    for (const [i, lookup] of lookups.entries()) {
      const answer = await first.dispatchFetch(urlOf(lookup), { headers: { 'accept-encoding': 'identity' } });
      const answerPath = answer.ok ? `/__reference/${i}` : '';
      if (answer.ok) files.set(answerPath, new Uint8Array(await answer.arrayBuffer()));
      else await answer.arrayBuffer();
      // As long as the access line: the path with the key's 12-character id and '...', the status and the time.
      const logLine = `GET ${new URL(urlOf(lookup)).pathname.replace(/apikey=.*$/, `apikey=${'x'.repeat(12)}...`)} ${answer.status} 0ms`;
      const bindings = {
        ANSWER_PATH: answerPath,
        KEY_SQL: keySql.keyEnd('').sql,
        KEY_HASH: hashSecret(key),
        LOG_LINE: logLine,
      };
      references.set(
        lookup,
        () => new Miniflare(convertV4MiniflareOptions({ ...common, script: REFERENCE_WORKER, bindings })),
      );
    }
    await first.dispose();

    /** A fresh workerd: its first request (cold), then WARM_RUNS more. */
    const measure = async (start: () => Miniflare, url: string): Promise<Run> => {
      const mf = start();
      await mf.ready;
      const pids = await workerdPids();
      const startup = (await cpuNs(pids)) / 1e6;
      const once = async () => {
        const before = await cpuNs(pids);
        const response = await mf.dispatchFetch(url, { headers: { 'accept-encoding': 'identity' } });
        await response.arrayBuffer();
        return { ms: ((await cpuNs(pids)) - before) / 1e6, status: response.status };
      };
      const cold = await once();
      const warm: number[] = [];
      for (let i = 0; i < WARM_RUNS; i++) {
        const run = await once();
        // A warm answer of another status (a 500 from a kept answer, a 429) would time something else.
        if (run.status !== cold.status)
          throw new Error(`${url}: warm request ${i + 1} answered ${run.status}, the cold one ${cold.status}`);
        warm.push(run.ms);
      }
      await mf.dispose();
      return { startup, cold: cold.ms, warm, status: cold.status };
    };

    const fmt = (x: number) => x.toFixed(1);
    const median = (xs: number[]) => quantile(xs, 0.5);
    const rows: string[] = [];
    const startups = { ours: [] as number[], reference: [] as number[] };
    for (const lookup of lookups.filter((l) => l.includes(only))) {
      const own: number[] = [];
      const platform: number[] = [];
      const net: number[] = [];
      const warm = { ours: [] as number[], reference: [] as number[] };
      for (let run = 0; run < Number(runsText); run++) {
        const a = await measure(ours, urlOf(lookup));
        const b = await measure(references.get(lookup)!, urlOf(lookup));
        startups.ours.push(a.startup);
        startups.reference.push(b.startup);
        own.push(a.cold);
        platform.push(b.cold);
        net.push(a.cold - b.cold);
        warm.ours.push(...a.warm);
        warm.reference.push(...b.warm);
        console.log(
          JSON.stringify({
            lookup,
            status: a.status,
            startup: a.startup,
            referenceStartup: b.startup,
            cold: a.cold,
            referenceCold: b.cold,
            warmMedian: median(a.warm),
            referenceWarmMedian: median(b.warm),
            warmP99: quantile(a.warm, 0.99),
          }),
        );
      }
      const cells = [
        own.map(fmt).join(', '),
        platform.map(fmt).join(', '),
        net.map(fmt).join(', '),
        fmt(median(warm.ours)),
        fmt(median(warm.reference)),
        fmt(median(warm.ours) - median(warm.reference)),
        fmt(quantile(warm.ours, 0.99)),
      ];
      rows.push(`| ${decodeURIComponent(lookup)} | ${cells.join(' | ')} |`);
    }
    console.log(
      [
        '',
        '| lookup | cold, ours (ms, fresh workerd each run) | cold, reference | cold, ours minus reference | warm median, ours | warm median, reference | warm, ours minus reference | warm p99, ours |',
        '|---|---:|---:|---:|---:|---:|---:|---:|',
        ...rows,
        '',
        // What a fresh isolate does before any request (the module evaluated, the Worker's files parsed and its search
        // readied): Cloudflare limits it apart from a request's CPU, to a second.
        `startup (workerd launched until ready), median of ${startups.ours.length} runs: ours ${fmt(median(startups.ours))} ms, reference ${fmt(median(startups.reference))} ms, ours minus reference ${fmt(median(startups.ours) - median(startups.reference))} ms`,
      ].join('\n'),
    );
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

await main();
