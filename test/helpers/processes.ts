/**
 * The runtimes as processes: npm start and the other npm scripts,
 * the edge function under Deno, the Worker under wrangler dev.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { DENO, ROOT } from './paths.ts';
import { sourceOf, tempDir } from './temp.ts';
import { freeLoopbackPort } from '../../lib/ports.ts';

/**
 * ARCHIVE_SOURCE for a process started over `dist`: the source the tests
 * built it from, so that what the process serves (and whether it rebuilds
 * `dist`) does not hang on what data/cache/ or the run's own ARCHIVE_SOURCE
 * holds. Nothing for a folder the tests did not build.
 */
function pinnedSource(dist: string | undefined): { ARCHIVE_SOURCE?: string } {
  const source = dist === undefined ? undefined : sourceOf(dist);
  return source ? { ARCHIVE_SOURCE: source } : {};
}

/** Starts the edge function under Deno behind the CDN stand-in; resolves once it listens. */
export async function startEdge(
  dist: string,
  env: Record<string, string> = {},
): Promise<{ port: number; child: ChildProcess; logs: string[]; stop(): Promise<void> }> {
  const child = spawn(DENO, ['run', '--allow-all', '--quiet', path.join(ROOT, 'cli/lib/netlify-edge.ts'), dist, '0'], {
    cwd: ROOT,
    env: { ...process.env, ...env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`deno did not start:\n${logs.join('\n')}`)), 60_000);
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) {
        if (line) logs.push(line);
        const m = /listening on (\d+)/.exec(line);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`deno exited ${code}:\n${logs.join('\n')}`)));
  });
  return {
    port,
    child,
    logs,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export interface Started {
  port: number;
  base: string;
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** SIGTERM, then the exit (after the logger flushed). */
  stop(): Promise<void>;
}

/**
 * `npm start` as a process, the way a developer or an operator runs it: the
 * real start script in `cwd` (default: this checkout; a `cleanCopy` for a
 * fresh clone) with `env` over the tests' own, but never ARCHIVE_SOURCE unless
 * given, so a fresh machine's default data is what it serves; over a build of
 * `buildInto`, the source it was built from (whatever data/cache/ holds). Resolves once it
 * printed `ready`; rejects with its whole output if it exits first.
 */
export async function startServer(env: Record<string, string>, options: StartOptions = {}): Promise<Started> {
  // A port picked free here may still be taken by another process before the server binds it: then try another, twice.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(env, options);
    } catch (error) {
      if (env.PORT || attempt === 3 || !String(error).includes('is in use')) throw error;
    }
  }
}

/**
 * Where and what to start: `script` is `cli/start.ts` (npm start) unless given, `ready` what it prints once it answers.
 */
interface StartOptions {
  cwd?: string;
  ready?: string;
  script?: string;
  /** Arguments after the script (`--production`). */
  args?: string[];
}

/**
 * `npm run dev:netlify` as a process (cli/netlify-local.ts): the edge function
 * under Deno and the portal function, in front of a local Blobs store.
 */
export const startNetlifyLocal = (env: Record<string, string>) =>
  startServer(env, { script: 'cli/netlify-local.ts', ready: 'ready:' });

/**
 * `npm run dev:cloudflare` over `dist`: the Worker under wrangler dev
 * (workerd), a local D1 in a folder of its own; resolves once `/health`
 * answers 200. `env` is passed on (MAIL_API_URL, settings).
 */
export async function startWorker(
  dist: string,
  env: Record<string, string> = {},
): Promise<{ port: number; pid: number; logs: string[]; state: string; stop(): Promise<void> }> {
  const port = await freeLoopbackPort();
  const state = await tempDir('worker-state');
  const child = spawn(process.execPath, [path.join(ROOT, 'cli/cloudflare-dev.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...pinnedSource(dist),
      ...env,
      DIST_DIR: dist,
      PORT: String(port),
      CLOUDFLARE_LOCAL_DIR: state,
      NO_COLOR: '1',
      FORCE_COLOR: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const logs: string[] = [];
  const collect = (chunk: Buffer) => logs.push(...chunk.toString().split('\n').filter(Boolean));
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      process.kill(-child.pid!, 'SIGTERM'); // wrangler and the workerd it started
    });
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`dev:cloudflare exited ${child.exitCode}:\n${logs.join('\n')}`);
    const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.ok,
      () => false,
    );
    // pid: also the process group of wrangler and the workerd it started
    // (detached), so a test can tell its own processes from others'.
    if (ok) return { port, pid: child.pid!, logs, state, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`dev:cloudflare did not answer:\n${logs.join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function startOnce(env: Record<string, string>, options: StartOptions): Promise<Started> {
  const { cwd = ROOT, ready = 'key portal:', script = 'cli/start.ts', args = [] } = options;
  const port = Number(env.PORT ?? (await freeLoopbackPort()));
  const fullEnv: NodeJS.ProcessEnv = { ...process.env };
  delete fullEnv.ARCHIVE_SOURCE;
  Object.assign(fullEnv, { PORT: String(port) }, pinnedSource(env.DIST_DIR), env);
  const child = spawn(process.execPath, [script, ...args], { cwd, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${script} did not print ${JSON.stringify(ready)} within 90 s:\n${output}`)),
      90_000,
    );
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (output.includes(ready)) {
        clearTimeout(timer);
        setTimeout(resolve, 50);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited ${code}:\n${output}`));
    });
  });
  return {
    port,
    base: `http://127.0.0.1:${port}`,
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** `pid` and every process under it (read from /proc). */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The parent is the second field after the command, which is in parentheses and may hold spaces.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // ended meanwhile
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]) ?? []));
  return tree;
}

/** An address of /proc/net/tcp{,6} (hex, each 32-bit word in host order, little-endian here) as text. */
function procAddress(hex: string): string {
  const [host, port] = hex.split(':');
  const bytes = (host.match(/.{8}/g) ?? []).flatMap((word) =>
    (word.match(/../g) ?? []).reverse().map((b) => parseInt(b, 16)),
  );
  if (bytes.length === 4) return `${bytes.join('.')}:${parseInt(port, 16)}`;
  const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 255 && bytes[11] === 255;
  if (mapped) return `::ffff:${bytes.slice(12).join('.')}:${parseInt(port, 16)}`;
  const groups = Array.from({ length: 8 }, (_, i) => ((bytes[2 * i] << 8) | bytes[2 * i + 1]).toString(16));
  return `[${groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::')}]:${parseInt(port, 16)}`;
}

/** Every TCP address that `pid` or a process under it listens on, as `address:port` (IPv6 in brackets). */
export function listeningAddresses(pid: number): string[] {
  const inodes = new Set<string>();
  for (const p of processTree(pid)) {
    try {
      for (const fd of readdirSync(`/proc/${p}/fd`)) {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSafe(`/proc/${p}/fd/${fd}`));
        if (m) inodes.add(m[1]);
      }
    } catch {
      // ended meanwhile
    }
  }
  const found: string[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === '0A' && inodes.has(fields[9])) found.push(procAddress(fields[1]));
    }
  }
  return found;
}

function readlinkSafe(file: string): string {
  try {
    return readlinkSync(file);
  } catch {
    return '';
  }
}

/** Whether an address from `listeningAddresses` is on loopback only (127.0.0.0/8, ::1, or IPv4-mapped loopback). */
export const isLoopback = (address: string) =>
  /^(127\.\d+\.\d+\.\d+|::ffff:127\.\d+\.\d+\.\d+|\[::1\]):\d+$/.test(address);

/**
 * Whether Debian's Varnish is installed (`.ci/run` installs it):
 * the suites behind it are skipped, and say so, without it.
 */
export const hasVarnish = (() => {
  try {
    execFileSync('varnishd', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
