/**
 * Plumbing shared by the robustness tests (fuzz, flood, faults): a sample
 * dist/ in a temp folder, keys put straight into a store, a Node server on
 * loopback, and log lines checked for whole keys as they are written.
 */
import { rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { build } from '../build/build.ts';
import { generateKey, keyId, type KeyBackend, type KeyRecord } from '../src/keys.ts';
import { sha256Hex } from '../src/refs.ts';
import { createNodeServer, type ServerOptions } from '../src/server/server.node.ts';
import { SAMPLE_SOURCE, tempDir } from './helpers.ts';


/** A whole key anywhere in a text: what no log line may hold. */
export const WHOLE_KEY = /faa_[A-Za-z0-9_-]{32}/;

export interface Sandbox {
  dir: string;
  dist: string;
  keysFile: string;
  remove(): Promise<void>;
}

/** Builds the sample into a fresh temp folder (never the project's dist/). */
export async function sampleSandbox(tag: string): Promise<Sandbox> {
  const dir = await tempDir(tag);
  const dist = path.join(dir, 'dist');
  await build({ source: SAMPLE_SOURCE, out: dist, summary: path.join(dir, 'summary.json'), log: () => {} });
  return { dir, dist, keysFile: path.join(dir, 'keys.json'), remove: () => rm(dir, { recursive: true, force: true }) };
}

/** `count` fresh keys with their records, made without the one-key-per-address check (fast). */
export async function makeKeys(count: number, tag = 'k'): Promise<{ keys: string[]; records: KeyRecord[] }> {
  const keys: string[] = [];
  const records: KeyRecord[] = [];
  const created = new Date(0).toISOString();
  const ids = new Set<string>();
  while (keys.length < count) {
    const key = generateKey();
    if (ids.has(keyId(key))) continue;
    ids.add(keyId(key));
    keys.push(key);
    records.push({ id: keyId(key), hash: await sha256Hex(key), email: `${tag}${keys.length}@example.org`, created });
  }
  return { keys, records };
}

export async function putAll(backend: KeyBackend, records: KeyRecord[]): Promise<void> {
  for (const r of records) await backend.put(r);
}

/** The JSON file FileKeyBackend reads. */
export const writeKeysFile = (file: string, records: KeyRecord[]) => writeFile(file, JSON.stringify({ keys: records }), { mode: 0o600 });

/** A key of the right shape that was never issued. */
export const unissuedKey = () => generateKey();

/** Collects log lines, remembering any that holds a whole key (checked as written, so floods need no big array). */
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
    log(line: string) {
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
