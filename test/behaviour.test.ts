/**
 * The behaviour suite on the full archive, in all three places the API runs,
 * plus the checks that only make sense across them: identical bodies, and no
 * data reachable without a key.
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importArchive } from '../build/import.ts';
import { createApi } from '../src/core.ts';
import { Keys } from '../src/keys.ts';
import { portalKeys } from '../src/keys-blobs.ts';
import { DiskData } from '../src/server/disk-data.node.ts';
import { createNodeServer } from '../src/server/server.node.ts';
import { SqliteKeyBackend } from '../src/server/sqlite-keys.node.ts';
import { startBlobs } from './_blobs.ts';
import type { Archive } from '../src/types.ts';
import { behaviourSuite, decoded, type Target } from './behaviour.ts';
import { operationIdFor, validateResponse } from './contract.ts';
import { buildInto, rawRequest, type RawReply, SHARED_SOURCE, startEdge, tempDir, treeDigest } from './helpers.ts';

let archive: Archive;
let dist: string;
const targets: Record<'core' | 'node' | 'edge', Target> = {} as never;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  archive = importArchive(readFileSync(SHARED_SOURCE, 'utf8')).archive;
  dist = await buildInto(SHARED_SOURCE, 'behaviour');
  const dir = await tempDir('behaviour-keys');

  // Core in-process and the Node server share one SQLite key store, as npm start and its portal do.
  const backend = new SqliteKeyBackend(path.join(dir, 'keys.db'));
  stops.push(async () => backend.close());
  const fileKeys = new Keys(backend);
  const api = createApi({ data: new DiskData(dist), keys: fileKeys, compression: true });
  targets.core = {
    compression: true,
    seen: [],
    issueKey: () => fileKeys.issue(`core-${Math.random()}@example.org`),
    revokeKey: (k) => fileKeys.revokeKey(k),
    async request(method, pathname, headers = {}) {
      const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
      const out = await api.reply({ method, url: pathname, header: (n) => lower[n] });
      return { status: out.status, headers: out.headers, body: Buffer.from(out.body ?? new Uint8Array()) };
    },
  };

  const node = createNodeServer({ dist, keys: fileKeys });
  await new Promise<void>((resolve) => node.server.listen(0, '127.0.0.1', resolve));
  const nodePort = (node.server.address() as AddressInfo).port;
  stops.push(() => new Promise((resolve) => node.server.close(() => resolve())));
  targets.node = {
    compression: true,
    seen: [],
    issueKey: () => fileKeys.issue(`node-${Math.random()}@example.org`),
    revokeKey: (k) => fileKeys.revokeKey(k),
    request: (method, pathname, headers) => rawRequest(nodePort, method, pathname, headers),
  };

  // The edge function reads keys from Netlify Blobs: a local BlobsServer stands in.
  const blobs = await startBlobs('behaviour-blobs');
  stops.push(() => blobs.stop());
  const blobKeys = portalKeys(blobs.access);
  const edge = await startEdge(dist, {
    NETLIFY_BLOBS_CONTEXT: blobs.context,
    KEY_CACHE_TTL_MS: '1000',
  });
  stops.push(edge.stop);
  targets.edge = {
    compression: false,
    seen: [],
    issueKey: () => blobKeys.issue(`edge-${Math.random()}@example.org`),
    revokeKey: (k) => blobKeys.revokeKey(k),
    request: (method, pathname, headers) => rawRequest(edge.port, method, pathname, headers),
  };
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
});

behaviourSuite('core', () => targets.core, () => archive);
behaviourSuite('node server', () => targets.node, () => archive);
behaviourSuite('edge function under Deno', () => targets.edge, () => archive);

describe('across runtimes', () => {
  it('gives byte-identical bodies and statuses in all three places', async () => {
    const keys = { core: await targets.core.issueKey(), node: await targets.node.issueKey(), edge: await targets.edge.issueKey() };
    const paths = [
      '/archive/year=1930',
      '/oscars/year=2026',
      '/person/name=Meryl%20Streep',
      '/person/name=Metro-Goldwyn-Mayer',
      '/movie/name=Face%2FOff/year=1998',
      '/award/name=Writing',
      '/award/name=a/year=1950',
      '/award/name=Sound',
      '/person/name=Nobody',
      '/archive/year=abc',
    ];
    for (const p of paths) {
      const replies: Record<string, RawReply> = {};
      for (const name of ['core', 'node', 'edge'] as const) replies[name] = await targets[name].request('GET', `${p}/apikey=${keys[name]}`);
      expect([p, replies.node.status, replies.edge.status]).toEqual([p, replies.core.status, replies.core.status]);
      expect(decoded(replies.node).equals(decoded(replies.core))).toBe(true);
      expect(decoded(replies.edge).equals(decoded(replies.core))).toBe(true);
      expect(replies.edge.headers.etag).toBe(replies.core.headers.etag);
    }
  });

  it('never answers a data file by its own path, on the Node server or the edge function', async () => {
    const files = [...(await treeDigest(dist)).keys()];
    const data = files.filter((f) => f.startsWith('_data/'));
    expect(data.length).toBeGreaterThan(1000);
    // Every data file is tried directly, with and without a key segment appended.
    const key = { node: await targets.node.issueKey(), edge: await targets.edge.issueKey() };
    const sample = data.filter((_, i) => i % 25 === 0).concat('_data/manifest.json');
    for (const name of ['node', 'edge'] as const) {
      for (const file of sample) {
        for (const p of [`/${file}`, `/${file}/apikey=${key[name]}`, `/${encodeURI(file).replaceAll('/', '%2F')}`, `/x/..%2F${file}`]) {
          const reply = await targets[name].request('GET', p);
          expect([name, p, reply.status]).toEqual([name, p, 404]);
          expect(reply.body.toString()).toBe('{"error":"Not Found"}');
        }
      }
    }
  });

  it('publishes the OpenAPI document and the reference page without a key, from both servers', async () => {
    const openapi = readFileSync(path.join(dist, 'openapi.json'));
    const page = readFileSync(path.join(dist, 'index.html'));
    for (const name of ['node', 'edge'] as const) {
      const doc = await targets[name].request('GET', '/openapi.json');
      expect([name, doc.status, doc.body.equals(openapi)]).toEqual([name, 200, true]);
      const html = await targets[name].request('GET', '/', { accept: 'text/html,application/xhtml+xml' });
      expect([name, html.status, html.body.equals(page)]).toEqual([name, 200, true]);
    }
  });

  it('answers no data route without a valid key anywhere', async () => {
    for (const name of ['node', 'edge'] as const) {
      for (const p of ['/archive', '/archive/apikey=', '/oscars/year=2026', '/person/name=Meryl%20Streep/apikey=nope', '/award/name=A']) {
        const reply = await targets[name].request('GET', p);
        expect([name, p, reply.status]).toEqual([name, p, 403]);
      }
    }
  });
});

describe('the contract', () => {
  for (const name of ['core', 'node', 'edge'] as const) {
    it(`holds for every reply the suite saw from the ${name}`, () => {
      const seen = targets[name].seen!;
      expect(seen.length).toBeGreaterThan(50);
      const statuses = new Set<number>();
      for (const { path: p, reply } of seen) {
        const text = decoded(reply).toString('utf8');
        const errors = validateResponse(operationIdFor(p), reply.status, reply.status === 304 ? null : JSON.parse(text));
        expect([p, reply.status, errors]).toEqual([p, reply.status, []]);
        statuses.add(reply.status);
      }
      expect([...statuses].sort()).toEqual([200, 304, 400, 403, 404, 429]);
    });
  }
});
