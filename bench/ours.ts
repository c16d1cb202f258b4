/**
 * Ours started for a benchmark exactly as `npm start` runs it (node
 * cli/start.ts, Node's own type stripping), pinned to one core with taskset,
 * on a free loopback port, answering before this returns.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freeLoopbackPort } from '../lib/ports.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

export interface Started {
  child: ChildProcess;
  port: number;
}

export interface OursOptions {
  /** The core it is pinned to, as taskset takes it. */
  cpu: string;
  env: Record<string, string>;
  /** Where its stdout (the access log) goes: a file descriptor, or nowhere. */
  stdout: number | 'ignore';
  /** Node's own options before the script (`--cpu-prof`, ...). */
  nodeOptions?: string[];
}

export async function startOurs(options: OursOptions): Promise<Started> {
  const port = await freeLoopbackPort();
  const child = spawn(
    'taskset',
    ['-c', options.cpu, process.execPath, ...(options.nodeOptions ?? []), 'cli/start.ts'],
    {
      cwd: ROOT,
      env: { ...process.env, ...options.env, PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', options.stdout, 'inherit'],
    },
  );
  // A minute at most: a full build on a busy machine, then the first answer.
  for (let tries = 0; tries < 3000; tries++) {
    if (child.exitCode !== null) throw new Error(`cli/start.ts exited with ${child.exitCode} before answering`);
    const answered = await fetch(`http://127.0.0.1:${port}/health`).then(
      (response) => response.body?.cancel().then(() => true),
      () => false,
    );
    if (answered) return { child, port };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  child.kill('SIGKILL');
  throw new Error(`cli/start.ts never answered on ${port}`);
}
