/**
 * The build files the Cloudflare Worker carries in its code
 * (adapters/_cloudflare/worker-bundle.node.ts): the manifest and the files of the category index
 * and of the search index, each byte for byte as stored, the records'
 * shards, each its range of its pack under the path of its own id, and the
 * file joins across all years are cut from; a file that no
 * longer hashes to its name is left out, so the Worker reads it from the
 * assets and answers 500 as without a bundle; a missing manifest, or one of
 * another layout, leaves every file out. And the source over them
 * (adapters/_fetch.ts), which hands them to the archive as checked text: a
 * lookup reading only bundled files fetches nothing (a search, a join), a
 * record only its answer, and every answer is the same bytes as from disk.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledFiles, MAX_BUNDLED_BYTES } from '../../adapters/_cloudflare/worker-bundle.node.ts';
import { FetchedFiles } from '../../adapters/_fetch.ts';
import { createApi } from '../../src/api/handler.ts';
import { ArchiveReader } from '../../src/store/archive.ts';
import { Keys } from '../../src/keys/rules.ts';
import { SqliteKeyBackend } from '../../src/keys/stores/sqlite.node.ts';
import { DiskData } from '../../adapters/_node/disk-data.ts';
import { dataPath, MANIFEST_PATH, parseRef, shardOf } from '../../src/store/refs.ts';
import type { Manifest } from '../../src/shared/types.ts';
import { SAMPLE_SOURCE } from '../helpers/paths.ts';
import { buildInto, tempDir } from '../helpers/temp.ts';
import { storedCategoryIndex } from '../helpers/stored.ts';

let dist: string;
let manifest: Manifest;
let backend: SqliteKeyBackend;
let key: string;

/** The path under dist/ of the own file a ref names. */
const fileOf = (ref: string) => dataPath(parseRef(ref)!.at.file)!;
/** The path a record shard is carried by: its own file's, or for a range of a pack the path of its own id. */
const carriedAs = (ref: string) => dataPath(parseRef(ref)!.id)!;
/** The bytes a ref names, read from dist/ (a range of a pack inflated). */
async function bytesOf(ref: string): Promise<Buffer> {
  const { at } = parseRef(ref)!;
  const file = await readFile(path.join(dist, dataPath(at.file)!));
  return at.range ? gunzipSync(file).subarray(...at.range) : file;
}

beforeAll(async () => {
  dist = await buildInto(SAMPLE_SOURCE, 'worker-bundle');
  manifest = JSON.parse(await readFile(path.join(dist, MANIFEST_PATH), 'utf8'));
  backend = new SqliteKeyBackend(path.join(await tempDir('worker-bundle-keys'), 'keys.db'));
  key = await new Keys(backend).issue('bundle@example.org');
});
afterAll(() => backend.close());

describe('the files the Worker carries', () => {
  it("are the manifest, the category and search indexes, the rankings' table, the records' shards and the joins' file, as stored", async () => {
    const files = bundledFiles(dist);
    const { joined } = await storedCategoryIndex(dist);
    const refs = [manifest.categories, ...manifest.search, manifest.rankings!, ...manifest.records!.shards, joined];
    const expected = [MANIFEST_PATH, ...refs.map(carriedAs)];
    expect(Object.keys(files).sort()).toEqual([...new Set(expected)].sort());
    expect(manifest.records!.shards.some((ref) => parseRef(ref)!.at.range)).toBe(true);
    expect(files[MANIFEST_PATH]).toBe(await readFile(path.join(dist, MANIFEST_PATH), 'utf8'));
    for (const ref of refs)
      expect([ref, Buffer.from(files[carriedAs(ref)], 'utf8').equals(await bytesOf(ref))]).toEqual([ref, true]);
    expect(Object.values(files).reduce((n, text) => n + Buffer.byteLength(text), 0)).toBeLessThanOrEqual(
      MAX_BUNDLED_BYTES,
    );
  });

  it('leave out a file that no longer hashes to its name, and all of them without a manifest of this layout', async () => {
    const category = path.join(dist, fileOf(manifest.categories));
    const original = await readFile(category);
    const damaged = Buffer.from(original);
    damaged[damaged.length >> 1] ^= 0x01;
    await writeFile(category, damaged);
    const { joined } = await storedCategoryIndex(dist);
    try {
      const files = bundledFiles(dist);
      expect(Object.keys(files)).not.toContain(fileOf(manifest.categories));
      // The joins' file is named by the category index alone: not carried without it.
      expect(Object.keys(files)).not.toContain(fileOf(joined));
      expect(Object.keys(files)).toContain(fileOf(manifest.search[0]));
    } finally {
      await writeFile(category, original);
    }
    const joinedFile = path.join(dist, fileOf(joined));
    const joinedBytes = await readFile(joinedFile);
    await writeFile(joinedFile, Buffer.concat([joinedBytes, Buffer.from(' ')]));
    try {
      const files = Object.keys(bundledFiles(dist));
      expect([files.includes(fileOf(joined)), files.includes(fileOf(manifest.categories))]).toEqual([false, true]);
    } finally {
      await writeFile(joinedFile, joinedBytes);
    }
    // A pack of records' shards that no longer hashes to its name: none of its shards is carried, every other one is.
    const ranged = manifest.records!.shards.filter((ref) => parseRef(ref)!.at.range);
    const pack = fileOf(ranged[0]);
    const packBytes = await readFile(path.join(dist, pack));
    const damagedPack = Buffer.from(packBytes);
    damagedPack[damagedPack.length >> 1] ^= 0x01;
    await writeFile(path.join(dist, pack), damagedPack);
    try {
      const carried = Object.keys(bundledFiles(dist));
      // A shard of the same bytes (an empty one) may come from another pack.
      const elsewhere = (ref: string) => ranged.some((r) => fileOf(r) !== pack && carriedAs(r) === carriedAs(ref));
      for (const ref of ranged) expect([ref, carried.includes(carriedAs(ref))]).toEqual([ref, elsewhere(ref)]);
    } finally {
      await writeFile(path.join(dist, pack), packBytes);
    }
    const manifestFile = path.join(dist, MANIFEST_PATH);
    const text = await readFile(manifestFile, 'utf8');
    try {
      await writeFile(manifestFile, JSON.stringify({ ...manifest, format: manifest.format - 1 }));
      expect(bundledFiles(dist)).toEqual({});
      await writeFile(manifestFile, text.slice(0, 100));
      expect(bundledFiles(dist)).toEqual({});
    } finally {
      await writeFile(manifestFile, text);
    }
    expect(bundledFiles(path.join(dist, 'nowhere'))).toEqual({});
  });
});

describe('a source over bundled files', () => {
  const fetched: string[] = [];
  const fetchFile = async (file: string) => {
    fetched.push(file);
    const bytes = await readFile(path.join(dist, file)).catch(() => null);
    return bytes ? new Response(new Uint8Array(bytes)) : new Response('Not Found', { status: 404 });
  };
  const get = (api: ReturnType<typeof createApi>, pathname: string) =>
    api.reply({ method: 'GET', url: `${pathname}/apikey=${key}`, header: () => null });
  /** A reply's bytes, sent whole or as a stream (a join cut from the carried file is a Blob's). */
  const body = async (reply: Awaited<ReturnType<typeof get>>) =>
    reply.stream ? Buffer.from(await new Response(reply.stream).arrayBuffer()) : Buffer.from(reply.body ?? []);

  it('fetches nothing for a search or a join, for a record only its own answer; every answer as from disk', async () => {
    const files = new FetchedFiles({ bundled: bundledFiles(dist) });
    const api = createApi({ keys: new Keys(backend), rateLimitPerMinute: 1_000_000, data: files.through(fetchFile) });
    const disk = createApi({ keys: new Keys(backend), rateLimitPerMinute: 1_000_000, data: new DiskData(dist) });
    const index = await storedCategoryIndex(dist);
    // A letter held by several category names: their answers are
    // joined from every year's elements (the index's `joined`).
    const letter = [...'etaoinsr'].find((c) => index.names.filter((n) => n.includes(c)).length > 1)!;
    const ranking = 'ranking of=films/by=nominations';
    const shards = manifest.records!.shards;
    const stored = JSON.parse((await bytesOf(shards[shardOf(ranking, shards.length)])).toString('utf8'))[ranking];
    const year = Object.keys(index.elements).find(
      (y) =>
        new Set(index.elements[y].parts.filter((_, i) => i % 3 === 0).filter((n) => index.names[n].includes(letter)))
          .size > 1,
    )!;
    for (const [pathname, reads] of [
      ['/search/name=an', []],
      [`/award/name=${letter}`, []],
      [`/award/name=${letter}/year=${year}`, []],
      ['/rankings/of=films', [fileOf(stored)]],
    ] as const) {
      fetched.length = 0;
      const [reply, read] = [await get(api, pathname), await get(disk, pathname)];
      expect([pathname, reply.status, fetched]).toEqual([pathname, 200, reads]);
      expect((await body(reply)).equals(await body(read))).toBe(true);
    }
  });

  it('cuts every join, across all years and at each year, from the carried file, as the Node server cuts it', async () => {
    const files = new FetchedFiles({ bundled: bundledFiles(dist) });
    const api = createApi({ keys: new Keys(backend), rateLimitPerMinute: 1_000_000, data: files.through(fetchFile) });
    const disk = createApi({ keys: new Keys(backend), rateLimitPerMinute: 1_000_000, data: new DiskData(dist) });
    const index = await storedCategoryIndex(dist);
    // Each letter and each word of the names: texts matching several names at many years.
    const texts = [...new Set(index.names.flatMap((n) => [...n.split(/[ ()]+/), ...n]))].filter(
      (t) => t && index.names.filter((n) => n.includes(t)).length > 1,
    );
    let joins = 0;
    for (const text of texts) {
      for (const year of [undefined, ...Object.keys(index.elements)]) {
        const pathname = `/award/name=${encodeURIComponent(text)}${year ? `/year=${year}` : ''}`;
        fetched.length = 0;
        const [reply, read] = [await get(api, pathname), await get(disk, pathname)];
        expect([pathname, reply.status, reply.headers.etag]).toEqual([pathname, read.status, read.headers.etag]);
        expect([pathname, (await body(reply)).equals(await body(read))]).toEqual([pathname, true]);
        // A join (at a year, one name used then is that name's stored answer, read as any answer is).
        if (reply.stream) {
          joins++;
          expect([pathname, fetched]).toEqual([pathname, []]);
        }
      }
    }
    expect(joins).toBeGreaterThan(50);
  });

  it('hands the archive each bundled file as its text and no other; reading one still fetches it', async () => {
    const files = bundledFiles(dist);
    const source = new FetchedFiles({ bundled: files }).through(fetchFile);
    for (const [file, text] of Object.entries(files)) expect(source.checkedText!(file)).toBe(text);
    expect(source.checkedText!(fileOf(manifest.archive))).toBeUndefined();
    fetched.length = 0;
    expect(
      Buffer.from((await source.read(MANIFEST_PATH))!).equals(await readFile(path.join(dist, MANIFEST_PATH))),
    ).toBe(true);
    expect(fetched).toEqual([MANIFEST_PATH]);
  });
});

describe('an archive prepared over the carried files, as the Worker prepares one as its isolate starts', () => {
  const text = (file: string) => readFile(path.join(dist, file), 'utf8');

  it("parses the manifest, the category index (the joins' file made a Blob), the search index's core and the rankings' table, reading nothing", async () => {
    const files = new FetchedFiles({ bundled: bundledFiles(dist) });
    const read: string[] = [];
    const archive = new ArchiveReader();
    archive.prepare({ ...files.carried(), read: (file) => (read.push(file), null) });
    expect(read).toEqual([]);
    // The parsed files' cache counts each at three times its text's length (docs/development.md).
    const { joined } = await storedCategoryIndex(dist);
    const parsed = [
      MANIFEST_PATH,
      ...[manifest.categories, joined, manifest.search[0], manifest.rankings!].map(fileOf),
    ];
    const texts = await Promise.all(parsed.map(text));
    expect(archive.parsedBytes).toBe(3 * texts.reduce((n, t) => n + t.length, 0));
    // Nothing carried, nothing parsed.
    const bare = new ArchiveReader();
    bare.prepare(new FetchedFiles().carried());
    expect(bare.parsedBytes).toBe(0);
  });

  it('answers after it as an archive not prepared does, reading no more', async () => {
    const files = new FetchedFiles({ bundled: bundledFiles(dist) });
    const archive = new ArchiveReader();
    archive.prepare(files.carried());
    const fetched: string[][] = [[], []];
    const through = (n: number) =>
      files.through(async (file) => {
        fetched[n].push(file);
        return new Response(new Uint8Array(await readFile(path.join(dist, file))));
      });
    const prepared = createApi({ keys: new Keys(backend), rateLimitPerMinute: 1e6, archive, data: through(0) });
    const plain = createApi({ keys: new Keys(backend), rateLimitPerMinute: 1e6, data: through(1) });
    const found: string[] = [];
    for (const pathname of [
      '/search/name=an',
      '/search/name=wiliam',
      '/award/name=e',
      '/award/name=Actress',
      '/rankings/of=people/by=wins/from=2000',
      '/archive',
    ]) {
      const url = `${pathname}/apikey=${key}`;
      const [a, b] = await Promise.all(
        [prepared, plain].map((api) => api.reply({ method: 'GET', url, header: () => null })),
      );
      expect([pathname, a.status, Buffer.from(a.body ?? []).equals(Buffer.from(b.body ?? []))]).toEqual([
        pathname,
        b.status,
        true,
      ]);
      if (a.status === 200) found.push(pathname);
    }
    expect(found).toHaveLength(6);
    expect(fetched[0]).toEqual(fetched[1]);
  });

  it('stays quiet over a damaged carried file, which the first request reading it answers as without preparing', async () => {
    const bundled = { ...bundledFiles(dist), [fileOf(manifest.search[0])]: 'not a search index' };
    const archive = new ArchiveReader();
    expect(() => archive.prepare(new FetchedFiles({ bundled }).carried())).not.toThrow();
    const statuses = await Promise.all(
      [archive, undefined].map(async (made) => {
        const api = createApi({
          keys: new Keys(backend),
          rateLimitPerMinute: 1e6,
          archive: made,
          data: new FetchedFiles({ bundled }).through(async () => new Response('Not Found', { status: 404 })),
        });
        return (await api.reply({ method: 'GET', url: `/search/name=an/apikey=${key}`, header: () => null })).status;
      }),
    );
    expect(statuses).toEqual([500, 500]);
  });
});
