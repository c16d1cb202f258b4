/**
 * `/health` when the archive cannot be read, on the Node server and on the
 * edge function under Deno: a corrupt or missing manifest answers 503 with the
 * documented body. The Node server answers 200 again once the file is back,
 * with no restart; the edge function keeps the bytes it read for a minute (a
 * deploy's files never change: a fix is a new deploy, a new isolate), so it
 * is only asked while the data is broken. (The 200 on the full archive is in
 * the behaviour suite.)
 *
 * And when the key store cannot answer key checks, on every runtime's store:
 * the Node server's SQLite file overwritten with garbage, the edge
 * function's Netlify Blobs gone (the local Blobs server stopped), and the
 * Worker's D1 without its schema (a real local D1 under Miniflare): 503 with
 * one fixed line that names no key, token or place, then 200 again once it
 * answers.
 */
import { readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { convertV4MiniflareOptions, Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi } from '../../src/api/handler.ts';
import { Keys } from '../../src/keys/rules.ts';
import { type D1DatabaseLike, d1Keys } from '../../adapters/_cloudflare/d1-keys.ts';
import { MESSAGES } from '../../src/shared/messages.ts';
import { MANIFEST_PATH } from '../../src/store/refs.ts';
import { DiskData } from '../../adapters/_node/disk-data.ts';
import { SqliteKeyBackend } from '../../src/keys/stores/sqlite.node.ts';
import { startBlobs } from '../helpers/blobs.ts';
import { validateResponse } from './contract.ts';
import { eventually, rawRequest } from '../helpers/http.ts';
import { startEdge } from '../helpers/processes.ts';
import { listen, type Running, sampleSandbox, type Sandbox } from '../helpers/servers.ts';

const UNAVAILABLE = '{"error":"Service Unavailable: the archive cannot be read"}';

let box: Sandbox;
let node: Running;
let edge: Awaited<ReturnType<typeof startEdge>>;
let manifest: Buffer;

beforeAll(async () => {
  box = await sampleSandbox('health');
  manifest = await readFile(path.join(box.dist, MANIFEST_PATH));
  await writeFile(path.join(box.dist, MANIFEST_PATH), manifest.subarray(0, manifest.length >> 1));
  node = await listen({ dist: box.dist, keysDb: box.keysDb, revalidateMs: 20 });
  edge = await startEdge(box.dist);
});
afterAll(async () => {
  await node?.close();
  await edge?.stop();
  await box?.remove();
});

const ports = () => ({ node: node.port, edge: edge.port });
/** Whether the runtimes answer `/health` with `status` (and, for 503, the documented body) within a few seconds. */
async function bothAnswer(status: number, runtimes: Record<string, number> = ports()): Promise<void> {
  for (const [name, port] of Object.entries(runtimes)) {
    let last = { status: 0, body: '' };
    const ok = await eventually(
      async () => {
        const reply = await rawRequest(port, 'GET', '/health');
        last = { status: reply.status, body: reply.body.toString('utf8') };
        return reply.status === status;
      },
      5_000,
      50,
    );
    expect([name, ok, last.status]).toEqual([name, true, status]);
    if (status === 503) {
      expect([name, last.body]).toEqual([name, UNAVAILABLE]);
      expect(validateResponse('health', 503, JSON.parse(last.body))).toEqual([]);
    } else {
      expect(JSON.parse(last.body)).toMatchObject({ status: 'ok', archive: { sample: true } });
    }
  }
}

describe('/health when the data cannot be read', () => {
  it('answers 503 on the Node server and the edge function while the manifest is corrupt', async () => {
    await bothAnswer(503);
  });

  it('answers 503 on both while the manifest is missing, HEAD included', async () => {
    await unlink(path.join(box.dist, MANIFEST_PATH));
    await bothAnswer(503);
    for (const [name, port] of Object.entries(ports())) {
      const head = await rawRequest(port, 'HEAD', '/health');
      expect([name, head.status, head.body.length]).toEqual([name, 503, 0]);
    }
  });

  it('answers 200 on the Node server once the manifest is back, without a restart', async () => {
    await writeFile(path.join(box.dist, MANIFEST_PATH), manifest);
    await bothAnswer(200, { node: node.port });
  });
});

describe('/health when the key store cannot answer', () => {
  const KEYS_DOWN = JSON.stringify({ error: MESSAGES.keysUnavailable });
  let keysBox: Sandbox;
  beforeAll(async () => {
    keysBox = await sampleSandbox('health-keys');
  });
  afterAll(() => keysBox?.remove());

  /** `/health` on `port` until it answers `status` (a few seconds at most); its last answer. */
  async function health(port: number, status: number): Promise<{ status: number; body: string }> {
    let last = { status: 0, body: '' };
    await eventually(
      async () => {
        const reply = await rawRequest(port, 'GET', '/health');
        last = { status: reply.status, body: reply.body.toString('utf8') };
        return reply.status === status;
      },
      5_000,
      50,
    );
    return last;
  }

  it('answers 503 on the Node server once its SQLite key database is overwritten with garbage, as keyed requests fail', async () => {
    const backend = new SqliteKeyBackend(keysBox.keysDb);
    const key = await new Keys(backend).issue('health@example.org');
    backend.close();
    const node = await listen({ dist: keysBox.dist, keysDb: keysBox.keysDb });
    try {
      expect((await health(node.port, 200)).status).toBe(200);
      expect((await rawRequest(node.port, 'GET', `/archive/year=1929/apikey=${key}`)).status).toBe(200);
      const size = (await readFile(keysBox.keysDb)).length;
      await writeFile(keysBox.keysDb, Buffer.alloc(size, 0x5a));
      const down = await health(node.port, 503);
      expect(down).toEqual({ status: 503, body: KEYS_DOWN });
      expect(down.body).not.toContain(keysBox.keysDb);
      expect((await rawRequest(node.port, 'HEAD', '/health')).status).toBe(503);
      // The lookups fail too: health says what they do.
      expect((await rawRequest(node.port, 'GET', `/archive/year=1929/apikey=${key}`)).status).toBe(500);
    } finally {
      await node.close();
    }
  });

  it('answers 503 on the edge function while its Netlify Blobs store cannot be reached, and 200 with it', async () => {
    const blobs = await startBlobs('health-blobs');
    let stopped = false;
    const edge = await startEdge(keysBox.dist, { NETLIFY_BLOBS_CONTEXT: blobs.context });
    try {
      expect((await health(edge.port, 200)).status).toBe(200);
      await blobs.stop();
      stopped = true;
      const down = await health(edge.port, 503);
      expect(down).toEqual({ status: 503, body: KEYS_DOWN });
      expect(down.body).not.toContain('test-token');
    } finally {
      await edge.stop();
      if (!stopped) await blobs.stop();
    }
    // No Blobs access at all (the site's environment lacks it): no key check can be answered either.
    const bare = await startEdge(keysBox.dist);
    try {
      expect(await health(bare.port, 503)).toEqual({ status: 503, body: KEYS_DOWN });
    } finally {
      await bare.stop();
    }
  });

  it('answers 503 in the Worker while its D1 database cannot answer (no keys table), and 200 once it can', async () => {
    const mf = new Miniflare(
      convertV4MiniflareOptions({
        modules: true,
        script: 'export default { fetch: () => new Response(null) }',
        d1Databases: { KEYS: 'health-d1' },
        cf: false,
      }),
    );
    try {
      const db = (await mf.getD1Database('KEYS')) as unknown as D1DatabaseLike & {
        exec(sql: string): Promise<unknown>;
      };
      const api = createApi({ keys: d1Keys(db), data: new DiskData(keysBox.dist) });
      const ask = async () => {
        const reply = await api.handle(new Request('http://127.0.0.1/health'));
        return { status: reply.status, body: await reply.text() };
      };
      expect(await ask()).toEqual({ status: 503, body: KEYS_DOWN });
      await db.exec('CREATE TABLE keys (hash TEXT PRIMARY KEY, revoked_at INTEGER)');
      // A probe's answer is reused for a second: the store is asked again after it.
      let last = await ask();
      expect(await eventually(async () => (last = await ask()).status === 200, 3_000, 100)).toBe(true);
      expect(JSON.parse(last.body)).toMatchObject({ status: 'ok', archive: { sample: true } });
    } finally {
      await mf.dispose();
    }
  });
});
