/**
 * `npm start` whose stdout goes wrong under it: closed (`npm start | head`,
 * EPIPE on the next log write) or stalled (a reader that stopped reading).
 * The server keeps answering, drops and counts log lines, says so once on
 * stderr, and a SIGTERM stops it within 5 s whatever stdout does. Real
 * processes, real pipes; the logger alone over a pipe whose reader went away
 * too.
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createLog } from '../../adapters/_node/log.ts';
import { rawRequest } from '../helpers/http.ts';
import { SAMPLE_SOURCE } from '../helpers/paths.ts';
import { type Started, startServer } from '../helpers/processes.ts';
import { buildInto, pipe, tempDir } from '../helpers/temp.ts';

let dist: string;
beforeAll(async () => {
  dist = await buildInto(SAMPLE_SOURCE, 'stdout');
});

/** npm start on the sample, with stderr kept apart from stdout. */
async function start(): Promise<{ server: Started; stderr: () => string }> {
  const dir = await tempDir('stdout');
  const server = await startServer({ DIST_DIR: dist, KEYS_DB: path.join(dir, 'keys.db') });
  let stderr = '';
  server.child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk));
  return { server, stderr: () => stderr };
}

/** `count` requests for long paths that answer 404: each a long access-log line. */
async function flood(port: number, count: number, at = 0): Promise<number> {
  let answered = 0;
  const long = 'x'.repeat(4000);
  for (let i = 0; i < count; i += 8) {
    const batch = Array.from({ length: Math.min(8, count - i) }, (_, j) =>
      rawRequest(port, 'GET', `/${long}/${at + i + j}`),
    );
    for (const reply of await Promise.all(batch)) if (reply.status === 404) answered++;
  }
  return answered;
}

/** SIGTERM, and how long until the process was gone, ms; one still there after 10 s is killed (and the test fails). */
async function stopTimed(server: Started): Promise<number> {
  const started = performance.now();
  const kill = setTimeout(() => server.child.kill('SIGKILL'), 10_000);
  await server.stop();
  clearTimeout(kill);
  return performance.now() - started;
}

describe('npm start with its stdout closed under it', () => {
  it('keeps answering every request, says once on stderr that log lines are dropped, and stops on SIGTERM', async () => {
    const { server, stderr } = await start();
    server.child.stdout!.destroy(); // the reader goes away, as `| head -n 14` does once it has its lines
    expect(await flood(server.port, 400)).toBe(400);
    await new Promise((r) => setTimeout(r, 200));
    expect(await flood(server.port, 400, 400)).toBe(400);
    expect(server.child.exitCode).toBeNull();
    const notices = stderr()
      .split('\n')
      .filter((l) => l.startsWith('log: cannot write to stdout'));
    expect(notices).toEqual([
      'log: cannot write to stdout (EPIPE); the server goes on, and log lines are dropped and counted from now on',
    ]);
    expect(await stopTimed(server)).toBeLessThan(5000);
    expect(server.child.exitCode).toBe(0);
    const count = /log: (\d+) lines dropped in all/.exec(stderr());
    expect(count).not.toBeNull();
    // the lines after the pipe closed, give or take the one batch that raised EPIPE
    expect(Number(count![1])).toBeGreaterThanOrEqual(700);
  });
});

describe('npm start with its stdout stalled', () => {
  it('keeps answering while nothing is read, and stops within 5 s of SIGTERM', async () => {
    const { server } = await start();
    server.child.stdout!.pause(); // the pipe fills (64 KiB) and stays full
    expect(await flood(server.port, 3000)).toBe(3000); // about 6 MB of log lines, more than any pipe holds
    const took = await stopTimed(server);
    expect(took).toBeLessThan(5000);
    expect(server.child.signalCode).toBeNull(); // it exited by itself, not killed
  });
});

describe('the logger over a pipe whose reader went away', () => {
  it('warns once, counts every line it held or was given after as dropped, and flushes at once rather than wait on it', async () => {
    const warnings: string[] = [];
    const { fd, reader } = await pipe('log');
    const log = createLog({ destination: fd, warn: (line) => warnings.push(line) });
    for (let i = 0; i < 10; i++) log(`GET /x/${i} 404 0ms`);
    reader.destroy(); // the read end closed: the first write gets EPIPE
    await new Promise((resolve) => reader.once('close', resolve));
    expect(await log.flush(1000)).toBe(true);
    for (let i = 0; i < 25; i++) log(`GET /y/${i} 404 0ms`);
    expect(await log.flush(1000)).toBe(true);
    expect(warnings).toEqual([
      `log: cannot write to file descriptor ${fd} (EPIPE); the server goes on, and log lines are dropped and counted from now on`,
    ]);
    expect(log.dropped).toBe(35); // the 10 it held when the pipe broke, and the 25 after
  });
});
