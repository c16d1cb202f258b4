/**
 * `/health` when the archive cannot be read, on the Node server and on the
 * edge function under Deno: a corrupt or missing manifest answers 503 with the
 * documented body. The Node server answers 200 again once the file is back,
 * with no restart; the edge function keeps the bytes it read for a minute (a
 * deploy's files never change: a fix is a new deploy, a new isolate), so it
 * is only asked while the data is broken. (The 200 on the full archive is in
 * the behaviour suite.)
 */
import { readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MANIFEST_PATH } from '../src/refs.ts';
import { validateResponse } from './contract.ts';
import { eventually, listen, rawRequest, type Running, sampleSandbox, type Sandbox, startEdge } from './helpers.ts';

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
});

const ports = () => ({ node: node.port, edge: edge.port });
/** Whether the runtimes answer `/health` with `status` (and, for 503, the documented body) within a few seconds. */
async function bothAnswer(status: number, runtimes: Record<string, number> = ports()): Promise<void> {
  for (const [name, port] of Object.entries(runtimes)) {
    let last = { status: 0, body: '' };
    const ok = await eventually(async () => {
      const reply = await rawRequest(port, 'GET', '/health');
      last = { status: reply.status, body: reply.body.toString('utf8') };
      return reply.status === status;
    }, 5_000, 50);
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
