/**
 * A text matching several category names is answered from stored elements
 * joined when asked, not from a stored answer of its own: on the full
 * archive, every word of the names at every held year answers what the
 * spec's oracle does (test/build/build.test.ts holds every join across
 * years), one ETag per distinct answer; the join is kept in the answer cache
 * counted at its bytes; and dist/ stays small for it.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApi, type Api } from '../../src/api/handler.ts';
import { ArchiveReader } from '../../src/store/archive.ts';
import { dataPath, parseRef } from '../../src/store/refs.ts';
import { DiskData } from '../../adapters/_node/disk-data.ts';
import type { Manifest } from '../../src/shared/types.ts';
import { makeKeys, memoryKeys } from '../helpers/keys.ts';
import { Keys } from '../../src/keys/rules.ts';
import { FULL_SOURCE } from '../helpers/paths.ts';
import { sharedBuild } from '../helpers/temp.ts';
import { expected, type SpecArchive } from '../oracle.ts';

const MB = 1_000_000;
let dist: string;
let api: Api;
let key: string;
let archive: SpecArchive;

async function served(pathname: string) {
  const out = await api.reply({ method: 'GET', url: `${pathname}/apikey=${key}`, header: () => null });
  return { status: out.status, text: new TextDecoder().decode(out.body ?? new Uint8Array(0)), etag: out.headers.etag };
}

beforeAll(async () => {
  dist = await sharedBuild(FULL_SOURCE);
  const { keys, records } = makeKeys(1, 'joins');
  key = keys[0];
  api = createApi({ data: new DiskData(dist), keys: new Keys(memoryKeys(records)), rateLimitPerMinute: 1e9 });
  archive = JSON.parse((await served('/archive')).text);
}, 600_000);

describe('a text matching several category names', () => {
  it('answers as the spec does for every word of the names, across all years and at every held year, one ETag per distinct answer', async () => {
    const names = [...new Set(Object.values(archive).flatMap((cats) => cats.map((c) => c.category)))];
    const words = new Set('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ('.split(''));
    for (const name of names) for (const word of name.split(/[ ()]+/)) if (word) words.add(word);
    const etagOf = new Map<string, string>();
    const textOf = new Map<string, string>();
    let joins = 0;
    for (const word of words) {
      const asks: [string, ReturnType<typeof expected.categoryByName>][] = [
        [`/award/name=${encodeURIComponent(word)}`, expected.categoryByName(archive, word)],
      ];
      for (const year of Object.keys(archive))
        asks.push([
          `/award/name=${encodeURIComponent(word)}/year=${year}`,
          expected.categoryByNameAndYear(archive, word, Number(year)),
        ]);
      for (const [pathname, want] of asks) {
        const got = await served(pathname);
        expect([pathname, got.status, got.text]).toEqual([pathname, want.status, want.text]);
        if (got.status !== 200) continue;
        if (names.filter((n) => n.includes(word)).length > 1) joins++;
        // A strong ETag: the same bytes under one ETag, other bytes under another.
        expect([pathname, etagOf.get(got.text) ?? got.etag]).toEqual([pathname, got.etag]);
        expect([pathname, textOf.get(got.etag) ?? got.text]).toEqual([pathname, got.text]);
        etagOf.set(got.text, got.etag);
        textOf.set(got.etag, got.text);
      }
    }
    expect(words.size).toBeGreaterThan(150);
    expect(joins).toBeGreaterThan(2_000);
  }, 300_000);

  it('is joined once, kept in the answer cache counted at its bytes, and answered from there again', async () => {
    const source = new DiskData(dist, { revalidateMs: 600_000 });
    const reader = new ArchiveReader();
    await reader.manifest(source);
    // the category index read and parsed
    await reader.find(source, { route: 'categoryByName', name: 'Actor' } as never);
    const before = reader.answerBytes;
    const answer = (await reader.find(source, { route: 'categoryByName', name: 'e' } as never))!;
    const body = await reader.read(answer, source);
    expect(body.length).toBe(Buffer.byteLength(expected.categoryByName(archive, 'e').text));
    expect(reader.answerBytes - before).toBeGreaterThanOrEqual(body.length);
    const again = reader.find(source, { route: 'categoryByName', name: 'e' } as never);
    expect(again).toBe(answer); // in memory: no promise, the same answer
  });
});

describe("the full archive's dist/", () => {
  it('holds at most 2,000 files and 40 MB, the dataset included', async () => {
    let files = 0;
    let bytes = 0;
    for (const entry of await readdir(dist, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      files++;
      bytes += (await stat(path.join(entry.parentPath, entry.name))).size;
    }
    const manifest = (await import(path.join(dist, '_data/manifest.json'), { with: { type: 'json' } }))
      .default as Manifest;
    let dataset = 0;
    for (const ref of Object.values(manifest.dataset?.files ?? {})) {
      dataset += (await stat(path.join(dist, dataPath(parseRef(ref)!.at.file)!))).size;
    }
    console.log(`dist/: ${files} files, ${bytes} bytes, ${dataset} of them the dataset's files`);
    expect(files).toBeLessThanOrEqual(2_000);
    expect(bytes).toBeLessThanOrEqual(40 * MB);
  });
});
