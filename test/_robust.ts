/**
 * Plumbing shared by the robustness tests (fuzz, flood, faults): a sample
 * dist/ in a temp folder, keys put straight into an SQLite key store, a Node
 * server on loopback, and log lines checked for whole keys as they are written.
 */
import { rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { build } from '../build/build.ts';
import { generateKey, hashSecret, keyId, type NewKey } from '../src/keys.ts';
import { redactLine } from '../src/redact.ts';
import { createNodeServer, type ServerOptions } from '../src/server/server.node.ts';
import { SqliteKeyBackend } from '../src/server/sqlite-keys.node.ts';
import { SAMPLE_SOURCE, tempDir } from './helpers.ts';


/** A whole key anywhere in a text: what no log line may hold. */
export const WHOLE_KEY = /faa_[A-Za-z0-9_-]{32}/;

export interface Sandbox {
  dir: string;
  dist: string;
  /** The SQLite key database the server opens. */
  keysDb: string;
  remove(): Promise<void>;
}

/** Builds the sample into a fresh temp folder (never the project's dist/). */
export async function sampleSandbox(tag: string): Promise<Sandbox> {
  const dir = await tempDir(tag);
  const dist = path.join(dir, 'dist');
  await build({ source: SAMPLE_SOURCE, out: dist, summary: path.join(dir, 'summary.json'), log: () => {} });
  return { dir, dist, keysDb: path.join(dir, 'keys.db'), remove: () => rm(dir, { recursive: true, force: true }) };
}

/** A stored key: a revoked one has `revokedAt`. */
export type KeyRecord = NewKey & { revokedAt?: number | null };

/** `count` fresh keys with their records, one address each (fast: no store involved). */
export function makeKeys(count: number, tag = 'k'): { keys: string[]; records: KeyRecord[] } {
  const keys: string[] = [];
  const records: KeyRecord[] = [];
  while (keys.length < count) {
    const key = generateKey();
    keys.push(key);
    records.push({ id: keyId(key), hash: hashSecret(key), email: `${tag}${keys.length}@example.org`, createdAt: 0 });
  }
  return { keys, records };
}

/** Puts records straight into a key store: an open backend, or a database file (opened and closed). */
export function storeKeys(target: SqliteKeyBackend | string, records: KeyRecord[]): void {
  const backend = typeof target === 'string' ? new SqliteKeyBackend(target, { view: false }) : target;
  backend.insertMany(records);
  if (typeof target === 'string') backend.close();
}

/** An in-memory SQLite key store holding `records`. */
export function memoryKeys(records: KeyRecord[]): SqliteKeyBackend {
  const backend = new SqliteKeyBackend(':memory:');
  storeKeys(backend, records);
  return backend;
}

/** A key of the right shape that was never issued. */
export const unissuedKey = () => generateKey();

/**
 * A log sink as the servers have one: lines are redacted where they are
 * written, then checked; any that still holds a whole key is remembered (as
 * written, so floods need no big array).
 */
export function keyWatchingLog(keep = 200) {
  const lines: string[] = [];
  const leaks: string[] = [];
  let count = 0;
  return {
    lines,
    leaks,
    get count() {
      return count;
    },
    log(raw: string) {
      const line = redactLine(raw);
      count++;
      if (WHOLE_KEY.test(line)) leaks.push(line);
      if (lines.length < keep) lines.push(line);
    },
  };
}

export interface Running {
  port: number;
  server: ReturnType<typeof createNodeServer>;
  close(): Promise<void>;
}

/** createNodeServer listening on 127.0.0.1, an ephemeral port. */
export async function listen(options: ServerOptions): Promise<Running> {
  const server = createNodeServer(options);
  await new Promise<void>((resolve) => server.server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.server.closeAllConnections();
        server.server.close(() => resolve());
      }),
  };
}

// Polling, raw HTTP and the full archive's path are the shared helpers' (test/helpers.ts), under the names these tests use.
export { eventually, FULL_SOURCE, ROOT, SAMPLE_SOURCE, rawRequest as httpRequest, type RawReply as HttpReply } from './helpers.ts';
