/**
 * npm run bench:profile -- PATH [SECONDS]: where our server's CPU goes on one
 * request, measured. It builds the full archive, starts ours as `npm bench`
 * does (cli/start.ts, access log on, written to a file, pinned to core 0)
 * under V8's sampling profiler, drives PATH with wrk from core 1 for
 * SECONDS (default 8) after a second's warm-up, and sorts the CPU samples
 * taken while wrk ran into what the request does: Node's HTTP and sockets
 * (which the ceiling, ours's answers replayed from memory, pays too), and
 * what the ceiling does not do: the route, the key check, the limiter, the
 * store's lookup, the reply, the access log. A native frame (a socket write,
 * a regular expression) counts for the JavaScript that called it.
 *
 * PATH takes `{key}` where the key goes, as in bench/bench.ts's workloads.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from '../build/build.ts';
import { CACHE_FILE } from '../build/archive/source.ts';
import { commandLine, refuser } from '../lib/command-line.ts';
import { Keys } from '../src/keys/rules.ts';
import { SqliteKeyBackend } from '../src/keys/stores/sqlite.node.ts';
import { startOurs } from './ours.ts';

const USAGE = `usage: npm run bench:profile -- PATH [SECONDS]

Profiles ours (cli/start.ts over the full archive, access log on) while wrk
asks PATH (with {key} where the key goes) for SECONDS (default 8), and prints
the share of the server's busy CPU each part of a request takes.

  -h, --help  this text`;

/** What a frame's script is part of, by its URL; the first that matches wins. */
const PARTS: [string, RegExp][] = [
  ['route and parameters (src/http/request.ts)', /\/src\/http\/request\.ts$/],
  ['key check (src/keys)', /\/src\/keys\//],
  ['limiter (src/shared/rate-limit.ts)', /\/src\/shared\/rate-limit\.ts$/],
  ['store lookup (src/store, its caches)', /\/src\/store\/|\/src\/shared\/(?:lru|maybe)\.ts$/],
  ['access log: redaction, line, write', /\/adapters\/_node\/log\.ts$|\/src\/shared\/redact\.ts$|sonic-boom|^node:fs$/],
  ['reply and handler (src/api, src/http, adapters)', /\/src\/(?:api|http)\/|\/adapters\//],
  [
    'Node HTTP, streams and sockets (the ceiling pays these too)',
    /^node:(?:_http|net|internal\/streams|stream|events)/,
  ],
];

interface Node {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

/** Each node's part: its script's, else its caller's (a native frame, or Node's own code, counts for what called it). */
function partsOf(nodes: Node[]): Map<number, string> {
  const caller = new Map<number, number>();
  for (const n of nodes) for (const c of n.children ?? []) caller.set(c, n.id);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const part = new Map<number, string>();
  const of = (id: number): string => {
    let found = part.get(id);
    if (found) return found;
    const { functionName, url } = byId.get(id)!.callFrame;
    const up = caller.get(id);
    found = ['(garbage collector)', '(program)', '(idle)'].includes(functionName)
      ? functionName
      : (PARTS.find(([, pattern]) => pattern.test(url))?.[0] ?? (up === undefined ? 'other' : of(up)));
    part.set(id, found);
    return found;
  };
  for (const n of nodes) of(n.id);
  return part;
}

const { positionals } = commandLine({ name: 'bench:profile', usage: USAGE, options: {}, positionals: 2 });
const [pathTemplate, seconds = '8'] = positionals;
const refuse = refuser('bench:profile');
if (!pathTemplate?.startsWith('/')) refuse("expected a PATH such as '/person/name=Meryl%20Streep/apikey={key}'", 2);
if (!/^[1-9][0-9]{0,3}$/.test(seconds)) refuse(`expected SECONDS a whole number from 1 to 9999, got ${seconds}`, 2);
const source = path.resolve(process.env.ARCHIVE_SOURCE || CACHE_FILE);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'faa-profile-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const dist = path.join(tmp, 'dist');
await build({ source, out: dist, summary: path.join(tmp, 'summary.json'), log: () => {} });
const keysDb = path.join(tmp, 'keys.db');
const store = new SqliteKeyBackend(keysDb, { view: false });
const key = await new Keys(store).issue('profile@example.org');
store.close();

const { child, port } = await startOurs({
  cpu: '0',
  env: { DIST_DIR: dist, KEYS_DB: keysDb, ARCHIVE_SOURCE: source, RATE_LIMIT_PER_MINUTE: '1000000000' },
  stdout: 'ignore',
  nodeOptions: ['--cpu-prof', `--cpu-prof-dir=${tmp}`],
});
const url = `http://127.0.0.1:${port}${pathTemplate.replace('{key}', key)}`;
const status = (await fetch(url)).status;
const wrk = (s: string) =>
  execFileSync('taskset', ['-c', '1', 'wrk', '-t1', '-c32', `-d${s}s`, url], { encoding: 'utf8' });
wrk('1');
// V8's sample times and hrtime are both the monotonic clock, in µs.
const from = Number(process.hrtime.bigint() / 1000n);
const rate = /Requests\/sec:\s+([\d.]+)/.exec(wrk(seconds))![1];
const to = Number(process.hrtime.bigint() / 1000n);
await new Promise<void>((resolve) => {
  child.once('exit', () => resolve());
  child.kill('SIGINT');
});

const file = readdirSync(tmp).find((f) => f.endsWith('.cpuprofile'))!;
const profile = JSON.parse(readFileSync(path.join(tmp, file), 'utf8')) as {
  nodes: Node[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
};
const part = partsOf(profile.nodes);
const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
const spent = new Map<string, number>();
/** Per part, the frames its samples stopped in: what it spends on. */
const within = new Map<string, Map<string, number>>();
let at = profile.startTime;
profile.samples.forEach((id, i) => {
  at += profile.timeDeltas[i];
  if (at < from || at > to) return;
  const name = part.get(id)!;
  const { functionName, url } = frames.get(id)!;
  const frame = `${functionName || '(anonymous)'} ${url.replace(/^file:\/\/.*?\/(?=(?:src|adapters|node_modules)\/)/, '') || '(native)'}`;
  spent.set(name, (spent.get(name) ?? 0) + profile.timeDeltas[i]);
  const frameTimes = within.get(name) ?? within.set(name, new Map()).get(name)!;
  frameTimes.set(frame, (frameTimes.get(frame) ?? 0) + profile.timeDeltas[i]);
});
spent.delete('(idle)');
const busy = [...spent.values()].reduce((a, b) => a + b, 0);
const share = (us: number) => `${((100 * us) / busy).toFixed(1)}%`;
console.log(
  `${pathTemplate}: status ${status}, ${rate} requests/s over ${seconds} s; server busy ${(busy / 1e6).toFixed(2)} s`,
);
console.log('\n| part | share of busy CPU | where, most first |\n|---|---:|---|');
for (const [name, us] of [...spent].sort((a, b) => b[1] - a[1])) {
  const top = [...within.get(name)!].sort((a, b) => b[1] - a[1]).slice(0, 3);
  console.log(`| ${name} | ${share(us)} | ${top.map(([frame, t]) => `${frame} ${share(t)}`).join('; ')} |`);
}
