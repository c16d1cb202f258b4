/**
 * Runs the project's own wrangler (from node_modules, under this Node: wrangler
 * refuses a Node older than 22), for npm run dev:cloudflare and
 * deploy:cloudflare, and reads what the Worker's config says.
 *
 * wrangler dev prints a line for every request with its whole URL, and a key
 * is in the URL: every line it prints is redacted here first (keys, sign-in
 * tokens and sessions, in any encoding: src/shared/redact.ts), so a key shows
 * as its id. Its local observability store (which would keep every request,
 * URL and all, under the --persist-to folder) and local data explorer are
 * turned off.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT } from './paths.ts';
import { redactLine } from '../../src/shared/redact.ts';
import { workerEntry } from '../../adapters/_cloudflare/worker-bundle.node.ts';

export const WRANGLER = path.join(ROOT, 'node_modules/wrangler/bin/wrangler.js');
export const WRANGLER_CONFIG = path.join(ROOT, 'wrangler.jsonc');
/** The D1 database id wrangler.jsonc holds until an operator puts theirs there. */
export const PLACEHOLDER_DATABASE_ID = '00000000-0000-0000-0000-000000000000';

/**
 * What wrangler prints offline that changes nothing here: it cannot reach
 * Cloudflare for the `Request.cf` object (a warning, then a DNS error and its
 * stack trace) and uses a placeholder. Said once, in one line, instead.
 */
const OFFLINE_NOISE = [
  /Unable to fetch the `?Request\.cf`? object/,
  /getaddrinfo (ENOTFOUND|EAI_AGAIN) \S*cloudflare\.com/,
];
const STACK_LINE = /^\s+at /;
const OFFLINE_LINE =
  '(offline: wrangler could not reach Cloudflare for the Request.cf object and uses a placeholder; nothing else changes)';

/** Passes wrangler's lines on, the offline noise above replaced by one line. */
export function withoutOfflineNoise(stream: NodeJS.ReadableStream, write: (line: string) => void): void {
  let said = false;
  let inTrace = false;
  createInterface({ input: stream }).on('line', (line) => {
    if (inTrace && STACK_LINE.test(line)) return;
    inTrace = false;
    if (OFFLINE_NOISE.some((noise) => noise.test(line))) {
      inTrace = true;
      if (!said) write(OFFLINE_LINE);
      said = true;
      return;
    }
    write(line);
  });
}

/**
 * What wrangler is run with besides `env`: no metrics, and no local store
 * of requests (their URLs hold keys) nor an explorer of the local data.
 */
const QUIET_ENV = { WRANGLER_SEND_METRICS: 'false', X_LOCAL_OBSERVABILITY: 'false', X_LOCAL_EXPLORER: 'false' };

/**
 * Starts wrangler with `args`, its output passed through redacted (but
 * for its offline noise); `env` is added to this process's environment.
 */
export function wrangler(args: string[], env: Record<string, string> = {}): ChildProcess {
  const child = spawn(process.execPath, [WRANGLER, ...args], {
    cwd: ROOT,
    stdio: ['inherit', 'pipe', 'pipe'],
    env: { ...process.env, ...QUIET_ENV, ...env },
  });
  withoutOfflineNoise(child.stdout!, (line) => process.stdout.write(`${redactLine(line)}\n`));
  withoutOfflineNoise(child.stderr!, (line) => process.stderr.write(`${redactLine(line)}\n`));
  return child;
}

/** Runs wrangler to its end: its exit code. */
export function runWrangler(args: string[], env?: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = wrangler(args, env);
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

interface WorkerConfig {
  main: string;
  assets: { directory: string };
  d1_databases: { database_id: string; migrations_dir: string }[];
}

/** wrangler.jsonc as JSON (its comments are whole lines). */
const readConfig = (): WorkerConfig => JSON.parse(readFileSync(WRANGLER_CONFIG, 'utf8').replace(/^\s*\/\/.*$/gm, ''));

/** The D1 database id in wrangler.jsonc. */
export const configuredDatabaseId = (): string | undefined => readConfig().d1_databases[0]?.database_id;

/**
 * wrangler.jsonc with its paths made absolute, its assets taken from `dist`
 * and its `main` the Worker carrying that build's whole-read files
 * (adapters/_cloudflare/worker-bundle.node.ts), written into `folder`: what a deploy and every
 * local run use, so that any build folder can be served and wrangler's own
 * scratch files stay in `folder`.
 */
export function workerConfig(dist: string, folder: string): string {
  const config = readConfig();
  mkdirSync(folder, { recursive: true });
  config.main = workerEntry(dist, folder, path.join(ROOT, config.main));
  config.assets.directory = dist;
  for (const db of config.d1_databases) db.migrations_dir = path.join(ROOT, db.migrations_dir);
  const file = path.join(folder, 'wrangler.json');
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`);
  return file;
}
