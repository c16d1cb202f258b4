/**
 * A source that streams (the Worker's, over Cloudflare's static assets):
 * an answer in a file of its own is passed on as a stream, byte for byte what
 * the Node server's source reads from disk and with the same headers; an
 * answer in a pack is still read and checked against the pack's hash, so a
 * damaged pack still answers 500; a join across all years is cut from its
 * file, read whole and checked against its hash (a damaged one answers
 * 500), the same bytes as from disk, the file read once for every join
 * (the Worker carries it in its code: test/store/worker-bundle.test.ts); a
 * missing file answers 500; HEAD cancels
 * the stream it does not send; the Node server writes a streamed reply whole.
 */
import { readFile, unlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiReply } from '../../src/http/reply.ts';
import { createApi } from '../../src/api/handler.ts';
import { FetchedFiles, MAX_FILE_BYTES } from '../../adapters/_fetch.ts';
import { Keys } from '../../src/keys/rules.ts';
import { dataPath, MANIFEST_PATH, parseRef } from '../../src/store/refs.ts';
import { DiskData } from '../../adapters/_node/disk-data.ts';
import { writeReply } from '../../adapters/_node/http.ts';
import { SqliteKeyBackend } from '../../src/keys/stores/sqlite.node.ts';
import type { Manifest, Shard } from '../../src/shared/types.ts';
import { SAMPLE_SOURCE } from '../helpers/paths.ts';
import { buildInto, tempDir } from '../helpers/temp.ts';
import { storedCategoryIndex } from '../helpers/stored.ts';

let dist: string;
let key: string;
let backend: SqliteKeyBackend;
let manifest: Manifest;
/** Paths the streaming source was asked for, and the streams it handed out that were cancelled. */
const fetched: string[] = [];
let cancelled: string[] = [];

/** The built files as a CDN hands them out: a stream per request, 404 for what is not there. */
async function fetchFile(file: string): Promise<Response> {
  fetched.push(file);
  const bytes = await readFile(path.join(dist, file)).catch(() => null);
  if (!bytes) return new Response('Not Found', { status: 404 });
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new Uint8Array(bytes));
      controller.close();
    },
    cancel: () => void cancelled.push(file),
  });
  return new Response(body, { headers: { 'content-length': String(bytes.length) } });
}

const options = () => ({ keys: new Keys(backend), rateLimitPerMinute: 1_000_000 });
const streaming = () => createApi({ ...options(), data: new FetchedFiles().through(fetchFile, { streams: true }) });
const onDisk = () => createApi({ ...options(), data: new DiskData(dist) });

async function bodyOf(reply: ApiReply): Promise<Buffer> {
  if (reply.stream) return Buffer.from(await new Response(reply.stream).arrayBuffer());
  return Buffer.from(reply.body ?? new Uint8Array(0));
}

/** The data error's 500, sent whole rather than streamed. */
async function expectDataError(reply: ApiReply): Promise<void> {
  expect([reply.status, reply.stream, (await bodyOf(reply)).toString()]).toEqual([
    500,
    undefined,
    '{"error":"Error fetching data"}',
  ]);
}

const get = (api: ReturnType<typeof createApi>, pathname: string, method = 'GET') =>
  api.reply({ method, url: `${pathname}/apikey=${key}`, header: () => null });

beforeAll(async () => {
  dist = await buildInto(SAMPLE_SOURCE, 'streamed');
  backend = new SqliteKeyBackend(path.join(await tempDir('streamed-keys'), 'keys.db'));
  key = await new Keys(backend).issue('streamed@example.org');
  manifest = JSON.parse(await readFile(path.join(dist, MANIFEST_PATH), 'utf8'));
});

afterAll(() => backend.close());

/** A person whose answer sits in a range of a pack, and that pack's path. */
async function packedPerson(): Promise<{ pathname: string; pack: string }> {
  for (const shardRef of manifest.shards) {
    const shard = JSON.parse(await readFile(path.join(dist, dataPath(parseRef(shardRef)!.id)!), 'utf8')) as Shard;
    for (const [name, [ref]] of Object.entries(shard)) {
      const at = parseRef(ref)!.at;
      if (at.range) return { pathname: `/person/name=${encodeURIComponent(name)}`, pack: dataPath(at.file)! };
    }
  }
  throw new Error('no packed person in the sample');
}

describe('answers from a source that streams', () => {
  it('streams the whole archive and each year from their own files, the same bytes and headers as from disk', async () => {
    const [api, disk] = [streaming(), onDisk()];
    for (const pathname of ['/archive', `/archive/year=${Object.keys(manifest.years)[0]}`]) {
      fetched.length = 0;
      const [streamed, read] = [await get(api, pathname), await get(disk, pathname)];
      expect([pathname, streamed.status, !!streamed.stream, streamed.body]).toEqual([pathname, 200, true, null]);
      expect(fetched.filter((f) => f.startsWith('_data/r/')).length).toBeGreaterThan(0);
      expect((await bodyOf(streamed)).equals(await bodyOf(read))).toBe(true);
      expect(streamed.headers).toEqual(read.headers);
    }
  });

  it('reads a packed answer whole, checked, and answers 500 once its pack is damaged', async () => {
    const { pathname, pack } = await packedPerson();
    const api = streaming();
    const reply = await get(api, pathname);
    expect([reply.status, reply.stream]).toEqual([200, undefined]);
    expect((await bodyOf(reply)).equals(await bodyOf(await get(onDisk(), pathname)))).toBe(true);

    const original = await readFile(path.join(dist, pack));
    const damaged = Buffer.from(original);
    damaged[damaged.length - 2] ^= 0x20;
    await writeFile(path.join(dist, pack), damaged);
    try {
      const fresh = await get(streaming(), pathname);
      expect([fresh.status, (await bodyOf(fresh)).toString()]).toEqual([500, '{"error":"Error fetching data"}']);
    } finally {
      await writeFile(path.join(dist, pack), original);
    }
  });

  it('cuts a join across all years from its file read whole, the same bytes and headers as from disk', async () => {
    const indexFile = dataPath(parseRef(manifest.categories)!.id)!;
    const index = await storedCategoryIndex(dist);
    const joinedFile = dataPath(parseRef(index.joined)!.id)!;
    const words = [...new Set(index.names.flatMap((name) => [...name.split(/[ ()]+/), ...name]))].filter(
      (w) => w && index.names.filter((n) => n.includes(w)).length > 1,
    );
    expect(words.length).toBeGreaterThan(20);
    const [api, disk] = [streaming(), onDisk()];
    for (const word of words) {
      const pathname = `/award/name=${encodeURIComponent(word)}`;
      fetched.length = 0;
      const [streamed, read] = [await get(api, pathname), await get(disk, pathname)];
      expect([pathname, streamed.status, streamed.stream]).toEqual([pathname, 200, undefined]);
      expect((await bodyOf(streamed)).equals(await bodyOf(read))).toBe(true);
      expect(streamed.headers).toEqual(read.headers);
      // Nothing but the manifest, the category index and the file joins are cut from: not the whole archive's answer.
      expect(fetched.filter((f) => ![MANIFEST_PATH, indexFile, joinedFile].includes(f))).toEqual([]);
    }
  });

  it('reads the file joins across all years are cut from once, however many joins are made', async () => {
    const index = await storedCategoryIndex(dist);
    const joinedFile = dataPath(parseRef(index.joined)!.id)!;
    const sets = new Map<string, string>();
    for (const name of index.names) {
      for (const word of [...name.split(/[ ()]+/), ...name]) {
        const matched = index.names.flatMap((n, i) => (word && n.includes(word) ? [i] : []));
        if (matched.length > 1) sets.set(matched.join(','), word);
      }
    }
    expect(sets.size).toBeGreaterThan(10);
    const api = streaming();
    fetched.length = 0;
    for (const word of sets.values())
      expect((await get(api, `/award/name=${encodeURIComponent(word)}`)).status).toBe(200);
    expect(fetched.filter((f) => f === joinedFile)).toEqual([joinedFile]);
  });

  it('answers 500 for a join across all years when the file it is cut from is missing or damaged', async () => {
    const index = await storedCategoryIndex(dist);
    const file = path.join(dist, dataPath(parseRef(index.joined)!.id)!);
    const original = await readFile(file);
    const damaged = Buffer.from(original);
    damaged[damaged.length >> 1] ^= 0x20;
    const letter = [...'etaoinsr'].find((c) => index.names.filter((n) => n.includes(c)).length > 1)!;
    for (const change of [() => unlink(file), () => writeFile(file, damaged)]) {
      await change();
      try {
        const reply = await get(streaming(), `/award/name=${letter}`);
        await expectDataError(reply);
      } finally {
        await writeFile(file, original);
      }
    }
    expect((await get(streaming(), `/award/name=${letter}`)).status).toBe(200);
  });

  it('answers 500 without reading a build file the CDN says is past the bound, and logs why', async () => {
    const lines: string[] = [];
    let cancelledHuge = 0;
    const huge = async () =>
      new Response(new ReadableStream({ cancel: () => void cancelledHuge++ }), {
        headers: { 'content-length': String(MAX_FILE_BYTES + 1) },
      });
    const api = createApi({ ...options(), data: new FetchedFiles().through(huge), log: (line) => lines.push(line) });
    const reply = await get(api, '/archive/year=1930');
    expect([reply.status, (await bodyOf(reply)).toString()]).toEqual([500, '{"error":"Error fetching data"}']);
    expect(cancelledHuge).toBe(1);
    expect(
      lines.some((line) => line.includes(`data error: ${MANIFEST_PATH} is said to be ${MAX_FILE_BYTES + 1} bytes`)),
    ).toBe(true);
  });

  it("answers 500 when an answer's own file is missing", async () => {
    const file = path.join(dist, dataPath(parseRef(manifest.archive)!.at.file)!);
    const original = await readFile(file);
    await unlink(file);
    try {
      const reply = await get(streaming(), '/archive');
      await expectDataError(reply);
    } finally {
      await writeFile(file, original);
    }
  });

  it('cancels the stream of a HEAD, sending no body and the length GET would send', async () => {
    cancelled = [];
    const api = streaming();
    const [head, full] = [await get(api, '/archive', 'HEAD'), await get(api, '/archive')];
    expect([head.status, head.body, head.stream]).toEqual([200, null, undefined]);
    expect(head.headers['content-length']).toBe(String((await bodyOf(full)).length));
    expect(cancelled).toEqual([dataPath(parseRef(manifest.archive)!.at.file)!]);
  });

  it('is written whole by the Node server, should a Node source ever stream', async () => {
    const reply = await get(streaming(), '/archive');
    const server = http.createServer((req, res) => writeReply(req, res, reply));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      const expected = await bodyOf(await get(onDisk(), '/archive'));
      expect([response.status, response.headers.get('content-length')]).toEqual([200, String(expected.length)]);
      expect(Buffer.from(await response.arrayBuffer()).equals(expected)).toBe(true);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
