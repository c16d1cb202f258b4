/**
 * The Worker in workerd as a deploy runs it, without wrangler dev in front:
 * bundled as `wrangler deploy` bundles it, its D1 migrated as a user migrates
 * it, its assets and bindings as wrangler.jsonc declares them, run by
 * Miniflare (one workerd process). wrangler dev adds a proxy Worker and an
 * inspector proxy of its own in a second workerd, which is no part of what
 * Cloudflare runs. workerd's inspector is on, so a test can read one
 * isolate's heap and collect its garbage (Chrome DevTools Protocol).
 *
 * V8 is told the limit Cloudflare gives each isolate (ISOLATE_LIMIT). Local
 * workerd gives none, so V8 grows its heap as on a desktop, letting garbage
 * reach twice what it would under a limit of 128 MB: the same joins peaked
 * at 46 to 62 MiB between collections without it, 36 to 41 with it, on a
 * quiet machine and a loaded one alike (November 2026).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { convertV4MiniflareOptions, Miniflare } from 'miniflare';
import { unstable_getMiniflareWorkerOptions } from 'wrangler';
import { workerConfig, WRANGLER } from '../../cli/lib/wrangler.ts';
import { d1Keys, type D1DatabaseLike } from '../../adapters/_cloudflare/d1-keys.ts';
import { tempDir } from './temp.ts';

/** The name the Worker's isolate gets (the inspector lists it as `core:user:<name>`). */
const NAME = 'api';
/**
 * What a Worker's isolate may hold, 128 MB, as V8's flag counts it (MiB, of
 * the old generation: the closest V8 has to an isolate's whole limit).
 * Miniflare passes workerd the flags of MINIFLARE_WORKERD_V8_FLAGS.
 */
const ISOLATE_LIMIT_FLAG = `--max-old-space-size=${Math.floor(128e6 / 2 ** 20)}`;

function wrangler(args: string[], cwd: string): void {
  const out = spawnSync(process.execPath, [WRANGLER, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, CI: '1', WRANGLER_SEND_METRICS: 'false', WRANGLER_LOG_PATH: path.join(cwd, 'logs') },
  });
  if (out.status !== 0) throw new Error(`wrangler ${args.join(' ')} failed:\n${out.stdout}\n${out.stderr}`);
}

/** One DevTools session: `send` resolves with the method's result (or rejects with its error, or after `ms`). */
async function devtools(url: string) {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = () => reject(new Error(`no inspector at ${url}`));
  });
  let last = 0;
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  socket.onmessage = (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
    const waiter = message.id === undefined ? undefined : waiting.get(message.id);
    if (!waiter) return;
    waiting.delete(message.id!);
    if (message.error) waiter.reject(new Error(message.error.message));
    else waiter.resolve(message.result);
  };
  const send = <T>(method: string, ms = 30_000) =>
    new Promise<T>((resolve, reject) => {
      const id = ++last;
      const timer = setTimeout(
        () => (waiting.delete(id), reject(new Error(`${method}: no answer within ${ms} ms`))),
        ms,
      );
      waiting.set(id, {
        resolve: (v) => (clearTimeout(timer), resolve(v as T)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      socket.send(JSON.stringify({ id, method }));
    });
  return { send, close: () => socket.close() };
}

export interface Workerd {
  /** The Worker's origin (`http://127.0.0.1:port`). */
  base: string;
  /** A key issued into the Worker's D1. */
  key: string;
  /** The workerd process. */
  pid: number;
  /**
   * The Worker's isolate after a full collection: its V8 heap in use and the
   * bytes of its ArrayBuffers (what an isolate's memory limit counts).
   * workerd runs an inspector command when the isolate next runs, so
   * `poke` (a request to the Worker) is sent until it has.
   */
  isolateBytes(poke: () => Promise<unknown>): Promise<number>;
  /**
   * The same without a collection: what the isolate holds as it
   * runs, garbage the collector has not yet reached included.
   */
  isolateBytesNow(poke: () => Promise<unknown>): Promise<number>;
  stop(): Promise<void>;
}

/** Starts the Worker over `dist` (environment variables `vars` added to wrangler.jsonc's). */
export async function startWorkerd(dist: string, vars: Record<string, string> = {}): Promise<Workerd> {
  const dir = await tempDir('workerd');
  const config = workerConfig(dist, dir);
  wrangler(
    ['d1', 'migrations', 'apply', 'DB', '--local', '--config', config, '--persist-to', path.join(dir, 'state')],
    dir,
  );
  wrangler(['deploy', '--dry-run', '--config', config, '--outdir', path.join(dir, 'bundle')], dir);
  const { workerOptions } = unstable_getMiniflareWorkerOptions(config);
  // The bundle is one module already: wrangler's rules for finding modules are not needed (and Miniflare refuses them).
  const { modulesRules: _, ...options } = workerOptions as typeof workerOptions & {
    bindings?: Record<string, unknown>;
  };
  const flags = process.env.MINIFLARE_WORKERD_V8_FLAGS;
  process.env.MINIFLARE_WORKERD_V8_FLAGS = ISOLATE_LIMIT_FLAG;
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      ...options,
      name: NAME,
      modules: true,
      scriptPath: path.join(dir, 'bundle', 'cloudflare.js'),
      modulesRoot: path.join(dir, 'bundle'),
      bindings: { ...options.bindings, ...vars },
      resourcePersistencePath: path.join(dir, 'state', 'v3'),
      host: '127.0.0.1',
      port: 0,
      inspectorPort: 0,
      // The access line of every request: not wanted in the test's output.
      handleStructuredLogs: () => {},
    } as never),
  );
  const url = await mf.ready.finally(() => {
    if (flags === undefined) delete process.env.MINIFLARE_WORKERD_V8_FLAGS;
    else process.env.MINIFLARE_WORKERD_V8_FLAGS = flags;
  });
  const key = await d1Keys((await mf.getD1Database('DB')) as unknown as D1DatabaseLike).issue('workerd@example.org');
  const inspector = new URL(String(await mf.getInspectorURL()));
  inspector.protocol = 'http:';
  const targets = (await (await fetch(new URL('/json/list', inspector))).json()) as {
    id: string;
    webSocketDebuggerUrl: string;
  }[];
  const target = targets.find((t) => t.id === `core:user:${NAME}`);
  if (!target) throw new Error(`no isolate core:user:${NAME} among ${targets.map((t) => t.id).join(', ')}`);
  const session = await devtools(target.webSocketDebuggerUrl);
  const pid = workerdChild();
  /**
   * Runs an inspector command in the isolate: workerd runs it
   * when the isolate next runs, so `poke` is sent until it has.
   */
  async function inIsolate<T>(method: string, poke: () => Promise<unknown>): Promise<T> {
    let done = false;
    const result = session.send<T>(method).finally(() => void (done = true));
    // The command may reach the isolate after a request already ran: ask again until it has run.
    for (let i = 0; i < 100 && !done; i++)
      await Promise.race([poke(), result]).then(() => new Promise((r) => setTimeout(r, 20)));
    return result;
  }
  const heapAndBuffers = async (poke: () => Promise<unknown>) => {
    const usage = await inIsolate<{ usedSize: number; backingStorageSize: number }>('Runtime.getHeapUsage', poke);
    return usage.usedSize + usage.backingStorageSize;
  };
  return {
    base: url.origin,
    key,
    pid,
    async isolateBytes(poke) {
      await inIsolate('HeapProfiler.collectGarbage', poke);
      return heapAndBuffers(poke);
    },
    isolateBytesNow: heapAndBuffers,
    async stop() {
      session.close();
      await mf.dispose();
    },
  };
}

/** The workerd process this process started (its child). */
function workerdChild(): number {
  for (const line of spawnSync('ps', ['-o', 'pid=,comm=', '--ppid', String(process.pid)], {
    encoding: 'utf8',
  }).stdout.split('\n')) {
    const [pid, comm] = line.trim().split(/\s+/);
    if (comm?.startsWith('workerd')) return Number(pid);
  }
  throw new Error('no workerd child');
}

/** Resident memory of a process, from /proc. */
export function residentBytes(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
}
