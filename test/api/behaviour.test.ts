/**
 * The behaviour suite on the full archive, in every place the API runs (the
 * core in-process, the Node server, the Netlify edge function under Deno, the
 * Cloudflare Worker under wrangler dev), plus the checks that only make sense
 * across them: byte-identical bodies, and no data reachable without a key.
 */
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi } from '../../src/api/handler.ts';
import { GRACE_PERIODS, Keys } from '../../src/keys/rules.ts';
import { portalKeys } from '../../adapters/_netlify/blobs-keys.ts';
import { DiskData } from '../../adapters/_node/disk-data.ts';
import { answerTags, Encoder } from '../../adapters/_node/encoding.ts';
import { createNodeServer } from '../../adapters/node.ts';
import { SqliteKeyBackend } from '../../src/keys/stores/sqlite.node.ts';
import { dataPath, parseRef, shardOf } from '../../src/store/refs.ts';
import { ROUTES } from '../../src/shared/routes.ts';
import { MESSAGES } from '../../src/shared/messages.ts';
import type { Manifest, Shard } from '../../src/shared/types.ts';
import { startBlobs } from '../helpers/blobs.ts';
import { behaviourSuite, decoded, type Target } from './behaviour.ts';
import { conformanceSuite } from './conformance.ts';
import { hostileSuite } from './hostile.ts';
import { operationIdFor, validateMedia, validateResponse } from './contract.ts';
import { ApiError, createOfflineClient } from '../../src/client/client.ts';
import { matchRoute } from '../../src/http/request.ts';
import { startMailApi } from '../helpers/mail.ts';
import { type RawReply, rawRequest } from '../helpers/http.ts';
import { keyThroughPortal } from '../helpers/keys.ts';
import { FULL_SOURCE } from '../helpers/paths.ts';
import { startEdge, startWorker } from '../helpers/processes.ts';
import { QUICK } from '../helpers/quick.ts';
import { readmeExamples } from '../helpers/readme.ts';
import { copyOfSharedBuild, tempDir, treeDigest } from '../helpers/temp.ts';
import { idRows, type SpecArchive, type SpecIds } from '../oracle.ts';

/** The whole archive as the core serves it: what the spec's oracle is evaluated over. */
let archive: SpecArchive;
/** Its nominations with the IMDb ids their source rows carry: what the oracle's id lookups read. */
let ids: SpecIds;
let dist: string;
/** The person lookup whose stored answer the setup corrupts, so every runtime can show section 7's 500. */
let unreadablePath: string;

/**
 * Every name the suites below ask for (`name=…` in their sources
 * and in the README's examples), decoded where it decodes.
 */
function namesAsked(): string[] {
  const sources = ['behaviour.ts', 'conformance.ts', 'behaviour.test.ts', '../../README.md'].map((f) =>
    readFileSync(path.join(import.meta.dirname, f), 'utf8'),
  );
  return sources.flatMap((text) =>
    [...text.matchAll(/name=([^/'"`$]+)/g)].map(([, raw]) => {
      try {
        return decodeURIComponent(raw);
      } catch {
        return raw;
      }
    }),
  );
}

/**
 * Corrupts (same length, other bytes) the stored answer of one person: one
 * bit of it inside the pack of its person-index shard, a shard no name the
 * suites ask for falls in. The pack no longer hashes to its name, so asking
 * for that person must answer 500 (and every name of that pack with it),
 * while everything the suites ask for keeps working.
 */
async function corruptOneAnswer(dist: string): Promise<string> {
  const manifest = JSON.parse(await readFile(path.join(dist, '_data/manifest.json'), 'utf8')) as Manifest;
  const asked = new Set(namesAsked().map((n) => shardOf(n, manifest.shards.length)));
  const shard = manifest.shards.findIndex((_, i) => !asked.has(i));
  const entries = JSON.parse(
    await readFile(path.join(dist, dataPath(parseRef(manifest.shards[shard])!.id)!), 'utf8'),
  ) as Shard;
  const [name, [ref]] = Object.entries(entries)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .find(([n, [r]]) => /^[A-Z][a-z]+ [A-Z][a-z]+$/.test(n) && parseRef(r)!.at.range)!;
  const { file } = parseRef(ref)!.at;
  const pack = path.join(dist, dataPath(file)!);
  const bytes = await readFile(pack);
  // one bit of the pack (stored gzipped, so every bit is every
  // answer's): no longer the bytes its name (a hash of them) promises
  bytes[bytes.length >> 1] ^= 0x20;
  await writeFile(pack, bytes);
  return `/person/name=${encodeURIComponent(name)}`;
}
const targets: Record<'core' | 'node' | 'edge' | 'worker', Target> = {} as never;
/** The client's offline mode, once it has downloaded the dataset from the Node server: then the network is cut. */
let offline: Target;

/**
 * The offline client as a target: each request is the client method its route
 * names, answered from the client's copy (an ApiError as its status and message).
 */
async function offlineTarget(port: number, apiKey: string): Promise<Target> {
  let online = true;
  const client = await createOfflineClient({
    baseUrl: `http://127.0.0.1:${port}`,
    apiKey,
    fetch: (input, init) => (online ? fetch(input, init) : Promise.reject(new Error('the network is cut'))),
  });
  online = false;
  const reply = (status: number, value: unknown): RawReply => ({
    status,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: Buffer.from(JSON.stringify(value)),
  });
  return {
    compression: false,
    issueKey: async () => 'offline',
    revokeKey: async () => {},
    rotateKey: async () => 'offline',
    endGrace: async () => {},
    async request(method, pathname) {
      const m = matchRoute(pathname);
      if (method !== 'GET' || m === null || m === 'root') return reply(404, { error: 'Not Found' });
      let args: unknown[];
      try {
        // A ranking's segments are one query object (its keys in the path's order); any other route's, its method's arguments in order.
        const query =
          m.rest &&
          Object.fromEntries(
            m.rest.map((segment) => [
              segment.slice(0, segment.indexOf('=')),
              decodeURIComponent(segment.slice(segment.indexOf('=') + 1)),
            ]),
          );
        args = query ? [query] : m.route.params.map((p) => decodeURIComponent(m.raw[p]!));
      } catch {
        // A path no method can be called with: the service's parser answers it before any lookup.
        return reply(400, { error: MESSAGES.badEncoding });
      }
      try {
        return reply(
          200,
          await (client as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[m.route.client](...args),
        );
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        return reply(error.status, { error: error.message });
      }
    },
  };
}
/** The runtimes other than the core, each over HTTP. */
const SERVED = ['node', 'edge', 'worker'] as const;
/** The targets this run starts: `npm run test:quick` the core alone (test/helpers/quick.ts). */
const RUNNING = QUICK ? (['core'] as const) : (['core', ...SERVED] as const);
const stops: (() => Promise<void>)[] = [];
let edgeLogs: string[] = [];

beforeAll(async () => {
  dist = await copyOfSharedBuild(FULL_SOURCE, 'behaviour');
  unreadablePath = await corruptOneAnswer(dist);
  const dir = await tempDir('behaviour-keys');

  // Core in-process and the Node server share one SQLite key store, as npm start and its portal do.
  const backend = new SqliteKeyBackend(path.join(dir, 'keys.db'));
  stops.push(async () => backend.close());
  const fileKeys = new Keys(backend);
  const data = new DiskData(dist);
  const api = createApi({ data, keys: fileKeys });
  // The core as the Node server asks it: its compression (adapters/_node/encoding.ts) around the reply.
  const encoder = new Encoder();
  targets.core = {
    compression: true,
    seen: [],
    issueKey: () => fileKeys.issue(`core-${Math.random()}@example.org`),
    revokeKey: (k) => fileKeys.revokeKey(k),
    rotateKey: (k, grace) => fileKeys.rotateKey(k, GRACE_PERIODS[grace]).then((r) => r.key),
    endGrace: (k) => fileKeys.revokeKey(k),
    async request(method, pathname, headers = {}) {
      const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
      const header = (n: string) => (n === 'if-none-match' ? answerTags(lower[n]) : lower[n]);
      const out = await encoder.encode(await api.reply({ method, url: pathname, header }), lower['accept-encoding']);
      return { status: out.status, headers: out.headers, body: Buffer.from(out.body ?? new Uint8Array(0)) };
    },
  };
  const served = await targets.core.request('GET', `/archive/apikey=${await targets.core.issueKey()}`);
  archive = JSON.parse(served.body.toString('utf8'));
  ids = idRows(archive, await readFile(FULL_SOURCE, 'utf8'));
  if (QUICK) return;

  const node = createNodeServer({ dist, keys: fileKeys });
  await new Promise<void>((resolve) => node.server.listen(0, '127.0.0.1', resolve));
  const nodePort = (node.server.address() as AddressInfo).port;
  stops.push(() => new Promise((resolve) => node.server.close(() => resolve())));
  targets.node = {
    compression: true,
    seen: [],
    issueKey: () => fileKeys.issue(`node-${Math.random()}@example.org`),
    revokeKey: (k) => fileKeys.revokeKey(k),
    rotateKey: (k, grace) => fileKeys.rotateKey(k, GRACE_PERIODS[grace]).then((r) => r.key),
    endGrace: (k) => fileKeys.revokeKey(k),
    request: (method, pathname, headers) => rawRequest(nodePort, method, pathname, headers),
  };

  offline = await offlineTarget(nodePort, await fileKeys.issue('offline@example.org'));

  // Deno and wrangler start side by side: each spends most of its start waiting on its own process.
  await Promise.all([edgeTarget(), workerTarget()]);
}, 300_000);

/** The edge function under Deno as a target, its keys in Netlify Blobs: a local BlobsServer stands in. */
async function edgeTarget(): Promise<void> {
  const blobs = await startBlobs('behaviour-blobs');
  stops.push(() => blobs.stop());
  const blobKeys = portalKeys(blobs.access);
  const edge = await startEdge(dist, {
    NETLIFY_BLOBS_CONTEXT: blobs.context,
    KEY_CACHE_TTL_MS: '1000',
    // Not a number: the edge function logs it and keeps the default of 60, which the suite's rate test then sees.
    RATE_LIMIT_PER_MINUTE: 'sixty',
  });
  edgeLogs = edge.logs;
  stops.push(edge.stop);
  targets.edge = {
    compression: false,
    seen: [],
    issueKey: () => blobKeys.issue(`edge-${Math.random()}@example.org`),
    revokeKey: (k) => blobKeys.revokeKey(k),
    rotateKey: (k, grace) => blobKeys.rotateKey(k, GRACE_PERIODS[grace]).then((r) => r.key),
    endGrace: (k) => blobKeys.revokeKey(k),
    request: (method, pathname, headers) => rawRequest(edge.port, method, pathname, headers),
  };
}

/**
 * The Worker under wrangler dev as a target: keys in a local D1, sign-in links mailed
 * through an HTTP e-mail API, so keys are had through its portal, as a person has them.
 */
async function workerTarget(): Promise<void> {
  const mailApi = await startMailApi();
  stops.push(() => mailApi.stop());
  const worker = await startWorker(dist, {
    MAIL_API_URL: mailApi.url,
    MAIL_API_TOKEN: 'test-token',
    PORTAL_ISSUE_LIMIT_PER_MINUTE: '100000',
  });
  stops.push(worker.stop);
  const sessions = new Map<string, string>();
  const workerBase = `http://127.0.0.1:${worker.port}`;
  targets.worker = {
    compression: false,
    seen: [],
    async issueKey() {
      const { key, session } = await keyThroughPortal(workerBase, mailApi);
      sessions.set(key, session);
      return key;
    },
    async revokeKey(key) {
      const response = await fetch(`${workerBase}/portal/keys/revoke`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sessions.get(key)}` },
      });
      if (response.status !== 200) throw new Error(`revoke answered ${response.status}`);
    },
    // As the portal page does it: the rotate dialog's choice, then "Stop the old key now".
    async rotateKey(key, grace) {
      const session = sessions.get(key);
      const response = await fetch(`${workerBase}/portal/keys/rotate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json' },
        body: JSON.stringify({ grace }),
      });
      if (response.status !== 200) throw new Error(`rotate answered ${response.status}`);
      const { apiKey } = (await response.json()) as { apiKey: string };
      sessions.set(apiKey, session!);
      return apiKey;
    },
    async endGrace(old) {
      const response = await fetch(`${workerBase}/portal/keys/end-grace`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sessions.get(old)}` },
      });
      if (response.status !== 200) throw new Error(`end-grace answered ${response.status}`);
    },
    request: (method, pathname, headers) => rawRequest(worker.port, method, pathname, headers),
  };
}

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
});

const TARGET_NAMES = {
  core: 'core',
  node: 'node server',
  edge: 'edge function under Deno',
  worker: 'Worker under wrangler dev',
} as const;
for (const t of RUNNING)
  behaviourSuite(
    TARGET_NAMES[t],
    () => targets[t],
    () => archive,
    () => ids,
  );
if (!QUICK)
  behaviourSuite(
    'offline client, network cut',
    () => offline,
    () => archive,
    () => ids,
    ['lookups', 'search'],
  );
for (const t of RUNNING)
  conformanceSuite(
    TARGET_NAMES[t],
    () => targets[t],
    () => archive,
    {
      get unreadablePath() {
        return unreadablePath;
      },
    },
  );
for (const t of RUNNING) hostileSuite(TARGET_NAMES[t], () => targets[t], { dist: () => dist });

describe.skipIf(QUICK)('edge settings', () => {
  it('logs a setting that is not a whole number and keeps its default', () => {
    expect(edgeLogs).toContain(
      'Expected RATE_LIMIT_PER_MINUTE to be a whole number from 1 and up, got "sixty"; using 60',
    );
  });
});

describe.skipIf(QUICK)('across runtimes', () => {
  it('gives byte-identical bodies, statuses and ETags in every place', async () => {
    const keys = {
      core: await targets.core.issueKey(),
      node: await targets.node.issueKey(),
      edge: await targets.edge.issueKey(),
      worker: await targets.worker.issueKey(),
    };
    const paths = [
      '/archive/year=1930',
      '/oscars/year=2026',
      '/person/name=Meryl%20Streep',
      '/person/name=Metro-Goldwyn-Mayer',
      '/movie/name=Face%2FOff/year=1998',
      '/award/name=Writing',
      '/award/name=a/year=1950',
      '/award/name=Actor/year=1930',
      '/award/name=Best%20Picture/year=2026',
      '/movie/name=KPop%20Demon%20Hunters/year=2026',
      '/award/name=Sound',
      '/person/name=Nobody',
      '/archive/year=abc',
      '/title/id=tt0120338',
      '/name/id=nm0000658',
      '/name/id=co0007143',
      '/title/id=tt0000000',
      '/name/id=tt0120338',
    ];
    for (const p of paths) {
      const replies: Record<string, RawReply> = {};
      for (const name of ['core', ...SERVED] as const)
        replies[name] = await targets[name].request('GET', `${p}/apikey=${keys[name]}`);
      for (const name of SERVED) {
        expect([p, name, replies[name].status]).toEqual([p, name, replies.core.status]);
        expect([p, name, decoded(replies[name]).equals(decoded(replies.core))]).toEqual([p, name, true]);
      }
      expect(replies.edge.headers.etag).toBe(replies.core.headers.etag);
      expect(replies.worker.headers.etag).toBe(replies.core.headers.etag);
    }
  });

  it('never answers a data file by its own path, on the Node server, the edge function or the Worker', async () => {
    const files = [...(await treeDigest(dist)).keys()];
    const data = files.filter((f) => f.startsWith('_data/'));
    expect(data.length).toBeGreaterThan(1000);
    // Every data file is tried directly, with and without a key segment appended.
    const key = {
      node: await targets.node.issueKey(),
      edge: await targets.edge.issueKey(),
      worker: await targets.worker.issueKey(),
    };
    // About 250 of them, spread over the whole tree, and the manifest; each target asked 16 at a time.
    const sample = data.filter((_, i) => i % Math.ceil(data.length / 250) === 0).concat('_data/manifest.json');
    for (const name of SERVED) {
      const paths = sample.flatMap((file) => [
        `/${file}`,
        `/${file}/apikey=${key[name]}`,
        `/${encodeURI(file).replaceAll('/', '%2F')}`,
        `/x/..%2F${file}`,
      ]);
      for (let at = 0; at < paths.length; at += 16) {
        const replies = await Promise.all(
          paths.slice(at, at + 16).map(async (p) => [p, await targets[name].request('GET', p)] as const),
        );
        for (const [p, reply] of replies)
          expect([name, p, reply.status, reply.body.toString()]).toEqual([name, p, 404, '{"error":"Not Found"}']);
      }
    }
  });

  it('publishes the OpenAPI document and the reference page without a key, from every server', async () => {
    const openapi = readFileSync(path.join(dist, 'openapi.json'));
    const page = readFileSync(path.join(dist, 'index.html'));
    for (const name of SERVED) {
      const doc = await targets[name].request('GET', '/openapi.json');
      expect([name, doc.status, doc.body.equals(openapi)]).toEqual([name, 200, true]);
      const html = await targets[name].request('GET', '/', { accept: 'text/html,application/xhtml+xml' });
      expect([name, html.status, html.body.equals(page)]).toEqual([name, 200, true]);
    }
  });

  it('answers no data route without a valid key anywhere', async () => {
    for (const name of SERVED) {
      for (const p of [
        '/archive',
        '/archive/apikey=',
        '/oscars/year=2026',
        '/person/name=Meryl%20Streep/apikey=nope',
        '/award/name=A',
        '/title/id=tt0120338',
        '/name/id=nm0000658/apikey=nope',
      ]) {
        const reply = await targets[name].request('GET', p);
        expect([name, p, reply.status]).toEqual([name, p, 403]);
      }
    }
  });
});

describe('the README', () => {
  it('answers the README’s example requests with the answers it prints (where not abridged)', async () => {
    const examples = readmeExamples();
    expect(examples.length).toBe(ROUTES.length);
    const k = await targets.core.issueKey();
    for (const { request, answer } of examples) {
      const reply = await targets.core.request('GET', request.replace('apikey=KEY', `apikey=${k}`));
      expect([request, reply.status]).toEqual([request, 200]);
      if (!answer.includes('…')) expect([request, decoded(reply).toString('utf8')]).toEqual([request, answer]);
    }
  });
});

describe('the contract', () => {
  for (const name of RUNNING) {
    it(`holds for every reply the suite saw from the ${name}`, () => {
      const seen = targets[name].seen!;
      expect(seen.length).toBeGreaterThan(50);
      const statuses = new Set<number>();
      for (const { path: p, reply } of seen) {
        const type = reply.headers['content-type'];
        // A dataset file is not JSON: its media type is what the document must name.
        if (type && !type.startsWith('application/json') && reply.body.length > 0) {
          expect([p, reply.status, validateMedia(operationIdFor(p)!, reply.status, type)]).toEqual([
            p,
            reply.status,
            [],
          ]);
          statuses.add(reply.status);
          continue;
        }
        const text = decoded(reply).toString('utf8');
        const errors = validateResponse(
          operationIdFor(p),
          reply.status,
          reply.status === 304 || text === '' ? null : JSON.parse(text),
        );
        expect([p, reply.status, errors]).toEqual([p, reply.status, []]);
        statuses.add(reply.status);
      }
      expect([...statuses].sort()).toEqual([200, 206, 304, 400, 403, 404, 416, 429, 500]);
    });
  }
});
