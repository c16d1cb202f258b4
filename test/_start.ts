/**
 * `npm start` as a process, the way a developer or an operator runs it: the
 * real start script with its environment (temp KEYS_DB, DIST_DIR, SMTP_URL,
 * ...), its whole output kept so tests can read every line it wrote.
 */
import { spawn } from 'node:child_process';
import { ROOT } from './helpers.ts';

export interface Started {
  port: number;
  base: string;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** SIGTERM, then the exit (after the logger flushed). */
  stop(): Promise<void>;
}

/** A free-looking port from a range other tests do not use. */
export const randomPort = () => 20_000 + Math.floor(Math.random() * 20_000);

export async function startServer(env: Record<string, string>, ready = 'key portal:'): Promise<Started> {
  const port = Number(env.PORT ?? randomPort());
  const fullEnv: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), ...env };
  delete fullEnv.ARCHIVE_SOURCE; // the sample, as on a fresh machine
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server/start.node.ts'], { cwd: ROOT, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 90 s:\n${output}`)), 90_000);
    const check = () => {
      if (!output.includes(ready)) return;
      clearTimeout(timer);
      resolve();
    };
    child.stdout.on('data', check);
    child.on('exit', (code) => reject(new Error(`exited ${code}:\n${output}`)));
  });
  return {
    port,
    base: `http://127.0.0.1:${port}`,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
