/**
 * The static build on the full archive: every precomputed answer equals the
 * spec's rules evaluated naively, two builds are identical, and a failed or
 * killed build leaves the previous dist/ whole.
 */
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { build } from '../build/build.ts';
import { importArchive } from '../build/import.ts';
import { nodeFs, recoverOutput } from '../build/output.ts';
import { createApi, type Api } from '../src/core.ts';
import { Keys } from '../src/keys.ts';
import { SqliteKeyBackend } from '../src/server/sqlite-keys.node.ts';
import { naiveAward, naiveFilm, naivePerson, naiveYear } from '../src/naive.ts';
import { dataPath, parseRef, shardOf } from '../src/refs.ts';
import { DiskData } from '../src/server/disk-data.node.ts';
import type { Archive, Manifest, Shard } from '../src/types.ts';
import { buildInto, eventually, ROOT, SAMPLE_SOURCE, SHARED_SOURCE, tempDir, treeDigest } from './helpers.ts';

let archive: Archive;
let dist: string;
let manifest: Manifest;
let api: Api;
let key: string;

/** Deterministic pseudo-random numbers, so a failure names the same cases every run. */
function random(seed: number) {
  return () => {
    seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
    return ((seed ^ (seed >>> 13)) >>> 0) / 2 ** 32;
  };
}

async function body(pathname: string): Promise<{ status: number; text: string }> {
  const out = await api.reply({ method: 'GET', url: `${pathname}/apikey=${key}`, header: () => null });
  return { status: out.status, text: new TextDecoder().decode(out.body ?? new Uint8Array()) };
}

const enc = encodeURIComponent;

beforeAll(async () => {
  archive = importArchive(await readFile(SHARED_SOURCE, 'utf8')).archive;
  dist = await buildInto(SHARED_SOURCE, 'equivalence');
  manifest = JSON.parse(await readFile(path.join(dist, '_data/manifest.json'), 'utf8'));
  const keys = new Keys(new SqliteKeyBackend(':memory:'));
  key = await keys.issue('equivalence@example.org');
  api = createApi({ data: new DiskData(dist), keys, rateLimitPerMinute: 1e9 });
});

describe('every precomputed answer equals the naive rules over the whole archive', () => {
  it('for every ceremony year', async () => {
    expect(Object.keys(manifest.years)).toEqual(Object.keys(archive));
    for (const year of Object.keys(archive)) {
      expect(await body(`/archive/year=${year}`)).toEqual({ status: 200, text: JSON.stringify(naiveYear(archive, year)) });
    }
    expect((await body('/archive')).text).toBe(JSON.stringify(archive));
  });

  it('for every full category name, across all years and at every year it was used', async () => {
    const names = [...new Set(Object.values(archive).flatMap((cats) => cats.map((c) => c.category)))];
    expect(manifest.categories.map((c) => c.name).sort()).toEqual([...names].sort());
    for (const name of names) {
      expect([name, await body(`/award/name=${enc(name)}`)]).toEqual([name, { status: 200, text: JSON.stringify(naiveAward(archive, name)) }]);
    }
    for (const [year, cats] of Object.entries(archive)) {
      for (const name of new Set(cats.map((c) => c.category))) {
        const expected = JSON.stringify(naiveAward(archive, name, year));
        expect([name, year, await body(`/award/name=${enc(name)}/year=${year}`)]).toEqual([name, year, { status: 200, text: expected }]);
      }
    }
  });

  it('for a few hundred substrings, one-letter ones and ones matching nothing included', async () => {
    const names = manifest.categories.map((c) => c.name);
    const next = random(7);
    const queries = new Set(['a', 'e', ' ', '(', '-', 'Actor', 'Writing', 'Music', 'Sound', 'Short', 'zz', 'ACTOR', 'Best picture', 'Qx']);
    while (queries.size < 320) {
      const name = names[Math.floor(next() * names.length)];
      const start = Math.floor(next() * name.length);
      queries.add(name.slice(start, start + 1 + Math.floor(next() * 12)));
    }
    const years = Object.keys(archive);
    let matched = 0;
    for (const q of queries) {
      const all = naiveAward(archive, q);
      const got = await body(`/award/name=${enc(q)}`);
      expect([q, got]).toEqual([q, all.length ? { status: 200, text: JSON.stringify(all) } : { status: 404, text: '{"error":"Award not found"}' }]);
      if (all.length) matched++;
      const year = years[Math.floor(next() * years.length)];
      const atYear = naiveAward(archive, q, year);
      const gotYear = await body(`/award/name=${enc(q)}/year=${year}`);
      expect([q, year, gotYear]).toEqual([q, year, atYear.length ? { status: 200, text: JSON.stringify(atYear) } : { status: 404, text: '{"error":"Award not found"}' }]);
    }
    expect(matched).toBeGreaterThan(250);
  });

  it('for every name in a sample of the person index, and names that are not there', async () => {
    const allNames: string[] = [];
    for (const ref of manifest.shards) {
      const shard = JSON.parse(await readFile(path.join(dist, dataPath(parseRef(ref)!.id)!), 'utf8')) as Shard;
      allNames.push(...Object.keys(shard));
    }
    const unique = new Set(allNames);
    expect(unique.size).toBe(allNames.length);
    const expectedNames = new Set(Object.values(archive).flatMap((cats) => cats.flatMap((c) => c.nominations.flatMap((n) => [...n.primary, ...n.secondary]))));
    expect(unique).toEqual(expectedNames);
    const sample = allNames.filter((_, i) => i % 20 === 0).concat(['Meryl Streep', 'Metro-Goldwyn-Mayer', 'Face/Off']);
    for (const name of sample) {
      expect([name, await body(`/person/name=${enc(name)}`)]).toEqual([name, { status: 200, text: JSON.stringify(naivePerson(archive, name)) }]);
    }
    for (const name of ['meryl streep', 'Meryl Streep ', 'Nobody', '..', 'Face']) {
      expect(await body(`/person/name=${enc(name)}`)).toEqual({ status: 404, text: '{"error":"Person not found"}' });
    }
  });

  it('for a few hundred film and year pairs', async () => {
    const pairs: [string, string][] = [];
    for (const [year, cats] of Object.entries(archive)) {
      for (const c of cats) for (const n of c.nominations) for (const film of c.category.includes('Picture') ? n.primary : n.secondary) pairs.push([film, year]);
    }
    const next = random(11);
    const chosen = Array.from({ length: 300 }, () => pairs[Math.floor(next() * pairs.length)]);
    for (const [film, year] of chosen) {
      expect([film, year, await body(`/movie/name=${enc(film)}/year=${year}`)]).toEqual([film, year, { status: 200, text: JSON.stringify(naiveFilm(archive, film, year)) }]);
    }
    const [film, year] = chosen[0];
    const other = String(Number(year) + 2);
    const expected = naiveFilm(archive, film, other);
    expect(await body(`/movie/name=${enc(film)}/year=${other}`)).toEqual(expected.length ? { status: 200, text: JSON.stringify(expected) } : { status: 404, text: '{"error":"Movie not found"}' });
  });

  it('stores files only under hex names and shards names by a hash', async () => {
    const files = [...(await treeDigest(dist)).keys()].filter((f) => f.startsWith('_data/r/'));
    for (const f of files) expect(f).toMatch(/^_data\/r\/[0-9a-f]{2}\/[0-9a-f]{20}$/);
    expect(shardOf('Meryl Streep')).toBe(shardOf('Meryl Streep'));
    expect(new Set(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((n) => shardOf(n))).size).toBeGreaterThan(1);
  });
});

/** A dist/ built from the sample, to be replaced by a build of the full archive that does not finish. */
async function previousDist(tag: string) {
  const dir = await tempDir(tag);
  const out = path.join(dir, 'dist');
  const summary = path.join(dir, 'summary.json');
  await build({ source: SAMPLE_SOURCE, out, summary, log: () => {} });
  return { dir, out, summary, before: await treeDigest(out) };
}

describe('the build', () => {
  it('is deterministic: two builds of the same source are identical byte for byte', async () => {
    const second = await buildInto(SHARED_SOURCE, 'determinism');
    const [a, b] = await Promise.all([treeDigest(dist), treeDigest(second)]);
    expect(a.size).toBeGreaterThan(1000);
    expect(b).toEqual(a);
  });

  it('leaves the previous dist/ whole when a write fails midway', async () => {
    const { dir, out, summary, before } = await previousDist('failed');
    let writes = 0;
    const failing = { ...nodeFs, writeFile: (f: string, b: Uint8Array) => (++writes > 500 ? Promise.reject(new Error('disk full (injected)')) : nodeFs.writeFile(f, b)) };
    await expect(build({ source: SHARED_SOURCE, out, summary, acceptChanges: true, fs: failing, log: () => {} })).rejects.toThrow('disk full (injected)');
    expect(writes).toBeGreaterThan(500);
    expect(await treeDigest(out)).toEqual(before);
    expect((await readdir(dir)).sort()).toEqual(['dist', 'summary.json']);
  });

  it('leaves the previous dist/ whole when the build process is killed midway', async () => {
    const { dir, out, summary, before } = await previousDist('killed');
    // node itself, not the tsx wrapper, so that SIGKILL reaches the process doing the writing.
    const child = spawn(process.execPath, ['--import', 'tsx', 'build/build.ts', '--source', SHARED_SOURCE, '--out', out, '--summary', summary, '--accept-changes'], { cwd: ROOT, stdio: 'ignore' });
    // Kill it once it has started writing its temporary folder, before the swap.
    const writing = await eventually(async () => {
      const tmp = (await readdir(dir)).find((n) => n.startsWith('dist.tmp-'));
      return !!tmp && (await readdir(path.join(dir, tmp, '_data/r')).catch(() => [])).length > 50;
    }, 60_000, 5);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(writing).toBe(true);
    expect(await treeDigest(out)).toEqual(before);
    await recoverOutput(out);
    expect((await readdir(dir)).sort()).toEqual(['dist', 'summary.json']);
  });
});

