/**
 * A throwaway PostgreSQL cluster for a test file or a benchmark: Debian's `postgresql`
 * binaries (under /usr/lib/postgresql/<version>/bin, or PG_BIN), `initdb`
 * into a temp folder, the server on 127.0.0.1 and a free port with its socket
 * in that folder, trust authentication for one user. As root it runs as the
 * `postgres` user (PostgreSQL refuses root). `stop()` and `start()` take it
 * down and bring it back on the same port (a database lost and back);
 * `remove()` stops it and deletes the folder, and runs on the process's exit
 * too, so a failing test file leaves no server behind.
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freeLoopbackPort } from './ports.ts';

const run = promisify(execFile);
const USER = 'faa';

/**
 * The folder of initdb and pg_ctl: PG_BIN, else the newest
 * /usr/lib/postgresql/<version>/bin that has them; null when PostgreSQL is not installed.
 */
export function postgresBin(): string | null {
  if (process.env.PG_BIN) return existsSync(path.join(process.env.PG_BIN, 'initdb')) ? process.env.PG_BIN : null;
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  const versions = readdirSync(base)
    .filter((v) => existsSync(path.join(base, v, 'bin', 'pg_ctl')) && existsSync(path.join(base, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(base, versions[0], 'bin') : null;
}

export interface PgCluster {
  /** `postgres://faa@127.0.0.1:<port>/<database>`. */
  url(database?: string): string;
  port: number;
  dir: string;
  /** A new empty database; its URL. */
  database(name: string): Promise<string>;
  /** Stops the server (`fast`: sessions ended; `immediate`: as if it crashed), keeping its files. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  /** Stops it and deletes its folder. */
  remove(): Promise<void>;
  /** Runs a PostgreSQL client program of the same version (pg_dump, pg_restore, psql) with `args`. */
  tool(name: string, args: string[]): Promise<{ stdout: string; stderr: string }>;
}

const alive = new Set<{ data: string; bin: string }>();
process.once('exit', () => {
  // A test file that ended without its afterAll (killed, crashed): the postmaster is told to quit at once.
  for (const { data } of alive) {
    try {
      const pid = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (pid > 0) process.kill(pid, 'SIGQUIT');
    } catch {
      // not running
    }
    rmSync(path.dirname(data), { recursive: true, force: true });
  }
});

/** Starts a fresh cluster; throws when PostgreSQL is not installed (`postgresBin()` says whether it is). */
export async function startPostgres(tag: string, options: { fsync?: boolean } = {}): Promise<PgCluster> {
  const bin = postgresBin();
  if (!bin)
    throw new Error(
      'PostgreSQL is not installed: apt-get install postgresql (or set PG_BIN to the folder of initdb and pg_ctl)',
    );
  const asRoot = process.getuid?.() === 0;
  // As root the cluster runs as `postgres`, who may not enter the
  // test run's private temp folder: it gets one of its own in /tmp.
  const dir = await mkdtemp(path.join(asRoot ? '/tmp' : os.tmpdir(), `faa-pg-${tag}-`));
  const data = path.join(dir, 'data');
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: group } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout), Number(group));
  }
  const as = async (program: string, args: string[], timeout = 60_000) => {
    const file = path.join(bin, program);
    return asRoot ? run('runuser', ['-u', 'postgres', '--', file, ...args], { timeout }) : run(file, args, { timeout });
  };
  const port = await freeLoopbackPort();
  const entry = { data, bin };
  alive.add(entry);
  await as('initdb', ['-D', data, '-U', USER, '--auth=trust', '-E', 'UTF8', '--no-sync', '--locale=C']);
  const start = async () => {
    // fsync off unless asked (the benchmark): a test cluster never outlives a
    // power cut; commits still wait for the server, which is what the tests check.
    const settings = `-k ${dir} -h 127.0.0.1 -p ${port} -c fsync=${options.fsync ? 'on' : 'off'} -c max_connections=60`;
    await as('pg_ctl', ['-D', data, '-l', path.join(dir, 'log'), '-w', '-t', '60', '-o', settings, 'start']);
  };
  const stop = async (mode: 'fast' | 'immediate' = 'fast') => {
    await as('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']).catch((error: Error) => {
      if (
        !/not running|No such file|does not exist/i.test(String(error) + String((error as { stderr?: string }).stderr))
      )
        throw error;
    });
  };
  const url = (database = 'postgres') => `postgres://${USER}@127.0.0.1:${port}/${database}`;
  try {
    await start();
  } catch (error) {
    const log = existsSync(path.join(dir, 'log')) ? readFileSync(path.join(dir, 'log'), 'utf8') : '';
    await rm(dir, { recursive: true, force: true });
    alive.delete(entry);
    throw new Error(`PostgreSQL did not start: ${error}\n${log}`);
  }
  return {
    url,
    port,
    dir,
    async database(name) {
      await run(path.join(bin, 'psql'), [
        '-X',
        '-q',
        '-v',
        'ON_ERROR_STOP=1',
        '-d',
        url(),
        '-c',
        `CREATE DATABASE "${name}"`,
      ]);
      return url(name);
    },
    stop,
    start,
    async remove() {
      await stop('immediate');
      alive.delete(entry);
      await rm(dir, { recursive: true, force: true });
    },
    tool: (name, args) => run(path.join(bin, name), args, { maxBuffer: 1 << 26 }),
  };
}
