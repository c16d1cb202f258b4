/**
 * The static build on the full archive: every precomputed answer equals the
 * spec's rules (test/oracle.ts, written from the spec alone) evaluated naively
 * over the archive as served, byte for byte; two builds are identical; and a
 * failed or killed build leaves the previous dist/ whole.
 */
import { spawn } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import fs from 'fs-extra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../../build/build.ts';
import { nodeFs, recoverOutput } from '../../build/output.ts';
import { BUILD_COMMAND } from '../../build/prepare-dist.ts';
import { createApi, type Api } from '../../src/api/handler.ts';
import { Keys } from '../../src/keys/rules.ts';
import { SqliteKeyBackend } from '../../src/keys/stores/sqlite.node.ts';
import { dataPath, parseRef, shardOf } from '../../src/store/refs.ts';
import { DiskData } from '../../adapters/_node/disk-data.ts';
import type { IdShard, Manifest, Shard } from '../../src/shared/types.ts';
import { eventually } from '../helpers/http.ts';
import { FULL_SOURCE, ROOT, SAMPLE_SOURCE } from '../helpers/paths.ts';
import { buildInto, sharedBuild, tempDir, treeDigest } from '../helpers/temp.ts';
import { expected, expectedById, type Expected, idRows, NAME_ID, type SpecArchive, TITLE_ID } from '../oracle.ts';

let archive: SpecArchive;
let dist: string;
let manifest: Manifest;
let api: Api;
let key: string;
/** How many lookups each equivalence test compared, for the closing figures. */
const covered: Record<string, number> = {};

/** Deterministic pseudo-random numbers, so a failure names the same cases every run. */
function random(seed: number) {
  return () => {
    seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
    return ((seed ^ (seed >>> 13)) >>> 0) / 2 ** 32;
  };
}

async function served(pathname: string): Promise<Expected> {
  const out = await api.reply({ method: 'GET', url: `${pathname}/apikey=${key}`, header: () => null });
  return { status: out.status, text: new TextDecoder().decode(out.body ?? new Uint8Array(0)) };
}

/** Asks the service and the oracle the same lookup; `label` names the case in a failure. */
async function same(label: string, pathname: string, want: Expected): Promise<Expected> {
  expect([label, await served(pathname)]).toEqual([label, want]);
  covered[label] = (covered[label] ?? 0) + 1;
  return want;
}

const enc = encodeURIComponent;
const distinct = <T>(xs: Iterable<T>) => [...new Set(xs)];

beforeAll(async () => {
  dist = await sharedBuild(FULL_SOURCE);
  manifest = JSON.parse(await readFile(path.join(dist, '_data/manifest.json'), 'utf8'));
  const keys = new Keys(new SqliteKeyBackend(':memory:'));
  key = await keys.issue('equivalence@example.org');
  api = createApi({ data: new DiskData(dist), keys, rateLimitPerMinute: 1e9 });
  archive = JSON.parse((await served('/archive')).text);
});

afterAll(() => {
  console.log(`equivalence: lookups compared with the oracle: ${JSON.stringify(covered)}`);
});

describe('every precomputed answer equals the spec evaluated naively over the served archive', () => {
  it('for the whole archive and every ceremony year, and 404 for years without one', async () => {
    expect(Object.keys(archive)).toHaveLength(97);
    await same('archive', '/archive', expected.allCeremonies(archive));
    for (const year of Object.keys(archive))
      await same('year', `/archive/year=${year}`, expected.ceremonyByYear(archive, Number(year)));
    for (const year of [1900, 1928, 1933, 2027, 9999])
      await same('year', `/archive/year=${year}`, expected.ceremonyByYear(archive, year));
  });

  it('for every full category name, across all years and at every year it was used', async () => {
    const names = distinct(Object.values(archive).flatMap((cats) => cats.map((c) => c.category)));
    expect(names.length).toBeGreaterThan(100);
    for (const name of names)
      await same('category name', `/award/name=${enc(name)}`, expected.categoryByName(archive, name));
    for (const [year, cats] of Object.entries(archive)) {
      for (const name of distinct(cats.map((c) => c.category))) {
        await same(
          'category name at its year',
          `/award/name=${enc(name)}/year=${year}`,
          expected.categoryByNameAndYear(archive, name, Number(year)),
        );
      }
    }
  });

  it('for several hundred substrings: one-letter, wrong-case and ones matching nothing included', async () => {
    const names = distinct(Object.values(archive).flatMap((cats) => cats.map((c) => c.category)));
    const next = random(7);
    const queries = new Set([
      'a',
      'e',
      ' ',
      '(',
      '-',
      'Actor',
      'Writing',
      'Music',
      'Sound',
      'Short',
      'zz',
      'ACTOR',
      'actor',
      'Best picture',
      'Qx',
      'Actress in a Leading Role ',
    ]);
    for (const letter of 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ') queries.add(letter);
    while (queries.size < 400) {
      const name = names[Math.floor(next() * names.length)];
      const start = Math.floor(next() * name.length);
      const piece = name.slice(start, start + 1 + Math.floor(next() * 12));
      queries.add(next() < 0.15 ? piece.toUpperCase() : next() < 0.1 ? `${piece}#` : piece);
    }
    const years = Object.keys(archive);
    let found = 0;
    let missing = 0;
    for (const q of queries) {
      const all = await same('substring', `/award/name=${enc(q)}`, expected.categoryByName(archive, q));
      if (all.status === 200) found++;
      else missing++;
      const year = Number(years[Math.floor(next() * years.length)]);
      await same(
        'substring at a year',
        `/award/name=${enc(q)}/year=${year}`,
        expected.categoryByNameAndYear(archive, q, year),
      );
    }
    expect(found).toBeGreaterThan(250);
    expect(missing).toBeGreaterThan(20);
  });

  it('for a text of every set of two or more names that one text is part of (every join across years there is)', async () => {
    const names = distinct(Object.values(archive).flatMap((cats) => cats.map((c) => c.category)));
    const textOfSet = new Map<string, string>();
    for (const name of names) {
      for (let start = 0; start < name.length; start++) {
        for (let end = start + 1; end <= name.length; end++) {
          const text = name.slice(start, end);
          const set = names.filter((n) => n.includes(text)).join('\u0000');
          if (!set.includes('\u0000')) break; // part of one name only, however it is extended
          if (!textOfSet.has(set)) textOfSet.set(set, text);
        }
      }
    }
    expect(textOfSet.size).toBeGreaterThan(100);
    for (const text of textOfSet.values())
      await same('joined across years', `/award/name=${enc(text)}`, expected.categoryByName(archive, text));
  }, 120_000);

  it('for a few thousand names of the person index, and names that are not there', async () => {
    const indexed: string[] = [];
    for (const ref of manifest.shards) {
      const shard = JSON.parse(await readFile(path.join(dist, dataPath(parseRef(ref)!.id)!), 'utf8')) as Shard;
      indexed.push(...Object.keys(shard));
    }
    // The index holds every name the spec's rule 1 can match, each once.
    const everyName = new Set(
      Object.values(archive).flatMap((cats) =>
        cats.flatMap((c) => c.nominations.flatMap((n) => [...n.primary, ...(n.secondary ?? [])])),
      ),
    );
    expect(new Set(indexed).size).toBe(indexed.length);
    expect(new Set(indexed)).toEqual(everyName);
    const sample = indexed
      .filter((_, i) => i % 5 === 0)
      .concat(['Meryl Streep', 'Metro-Goldwyn-Mayer', 'Face/Off', 'Timothée Chalamet']);
    expect(sample.length).toBeGreaterThan(3000);
    for (const name of sample) await same('person', `/person/name=${enc(name)}`, expected.personByName(archive, name));
    for (const name of [
      'meryl streep',
      'Meryl Streep ',
      ' Meryl Streep',
      'Nobody',
      '..',
      'Face',
      'MERYL STREEP',
      'Meryl',
    ]) {
      const want = await same('non-name', `/person/name=${enc(name)}`, expected.personByName(archive, name));
      expect(want.status).toBe(404);
    }
  });

  it('for a few hundred film and year pairs, both kinds of match, and years the film was not there', async () => {
    const pairs: [string, number][] = [];
    for (const [year, cats] of Object.entries(archive)) {
      for (const c of cats)
        for (const n of c.nominations)
          for (const film of [...n.primary, ...(n.secondary ?? [])]) pairs.push([film, Number(year)]);
    }
    const next = random(11);
    const chosen = Array.from({ length: 400 }, () => pairs[Math.floor(next() * pairs.length)]);
    chosen.push(['Sinners', 2026], ['Face/Off', 1998], ['Victor/Victoria', 1983], ['Wings', 1929]);
    for (const [film, year] of chosen) {
      await same(
        'film at a year',
        `/movie/name=${enc(film)}/year=${year}`,
        expected.filmByNameAndYear(archive, film, year),
      );
      await same(
        'film at another year',
        `/movie/name=${enc(film)}/year=${year + 3}`,
        expected.filmByNameAndYear(archive, film, year + 3),
      );
    }
  });

  it('for every IMDb id of the source, title and name, and for ids carried by nothing or malformed', async () => {
    const ids = idRows(archive, await readFile(FULL_SOURCE, 'utf8'));
    const indexed: string[] = [];
    for (const ref of manifest.ids)
      indexed.push(
        ...Object.keys(JSON.parse(await readFile(path.join(dist, dataPath(parseRef(ref)!.id)!), 'utf8')) as IdShard),
      );
    // The index holds every id of the source's FilmId and NomineeIds columns, each once, and nothing else.
    expect(new Set(indexed).size).toBe(indexed.length);
    expect(new Set(indexed)).toEqual(new Set([...ids.titles.keys(), ...ids.names.keys()]));
    expect(
      [...ids.titles.keys()].every((id) => TITLE_ID.test(id)) && [...ids.names.keys()].every((id) => NAME_ID.test(id)),
    ).toBe(true);
    for (const id of ids.titles.keys()) await same('title id', `/title/id=${id}`, expectedById.titleById(ids, id));
    for (const id of ids.names.keys()) await same('name id', `/name/id=${id}`, expectedById.nameById(ids, id));
    for (const id of ['tt0000000', 'tt120338', 'tt01203380', 'tt99999999999999999999']) {
      expect((await same('unknown id', `/title/id=${id}`, expectedById.titleById(ids, id))).status).toBe(404);
    }
    for (const id of ['nm0000000', 'co0000000', 'nm658', 'co99999999']) {
      expect((await same('unknown id', `/name/id=${id}`, expectedById.nameById(ids, id))).status).toBe(404);
    }
    const malformed: [string, RegExp][] = [
      ...[
        'nm0000658',
        'co0028775',
        'TT0120338',
        'tt',
        'tt012a',
        '%20tt0120338',
        'tt0120338%20',
        '%3F',
        'tt-1',
        'Titanic',
      ].map((id) => [`/title/id=${id}`, /^Invalid title id: expected `tt` followed by digits/] as [string, RegExp]),
      ...['tt0120338', 'NM0000658', 'nm', 'ch0000001', 'nm0000658,nm0000659', '%3F', 'Meryl%20Streep'].map(
        (id) => [`/name/id=${id}`, /^Invalid name id: expected `nm` or `co` followed by digits/] as [string, RegExp],
      ),
    ];
    for (const [pathname, message] of malformed) {
      const reply = await served(pathname);
      expect([pathname, reply.status, JSON.parse(reply.text).error]).toEqual([
        pathname,
        400,
        expect.stringMatching(message),
      ]);
      covered['malformed id'] = (covered['malformed id'] ?? 0) + 1;
    }
  });

  it('stores files only under hex names and shards names by a hash', async () => {
    const files = [...(await treeDigest(dist)).keys()].filter((f) => f.startsWith('_data/r/'));
    for (const f of files) expect(f).toMatch(/^_data\/r\/[0-9a-f]{2}\/[0-9a-f]{20}$/);
    expect(shardOf('Meryl Streep')).toBe(shardOf('Meryl Streep'));
    expect(new Set(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((n) => shardOf(n))).size).toBeGreaterThan(1);
  });
});

/** Every file under `dir` with its size in bytes, by path relative to it. */
async function fileSizes(dir: string): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    sizes.set(path.relative(dir, full), (await stat(full)).size);
  }
  return sizes;
}

/** Workers' free plan: static assets per version, and the most bytes of one. */
const WORKERS_FREE_FILES = 20_000;
const WORKERS_FREE_FILE_BYTES = 25 * 1024 * 1024;
/** What a cold person or id lookup may have to hash besides its shard: one pack of tens of KiB. */
const PACK_BOUND = 128 * 1024;

describe("the full archive's dist/ fits Cloudflare Workers' free plan", () => {
  it(`holds at most ${WORKERS_FREE_FILES} files, none over 25 MiB`, async () => {
    const sizes = await fileSizes(dist);
    const largest = Math.max(...sizes.values());
    console.log(`dist/: ${sizes.size} files, the largest ${largest} bytes`);
    expect(sizes.size).toBeLessThanOrEqual(WORKERS_FREE_FILES);
    expect(largest).toBeLessThanOrEqual(WORKERS_FREE_FILE_BYTES);
  });

  it('keeps the answers of one name or id shard in one pack of at most 128 KiB, each answer once', async () => {
    const sizes = await fileSizes(dist);
    const packsOf = (refs: string[]) =>
      new Set(
        refs
          .map((r) => parseRef(r)!.at)
          .filter((p) => p.range)
          .map((p) => p.file),
      );
    let packed = 0;
    for (const [index, refs] of [manifest.shards, manifest.ids].entries()) {
      for (const ref of refs) {
        const shard = JSON.parse(await readFile(path.join(dist, dataPath(parseRef(ref)!.id)!), 'utf8')) as
          Shard | IdShard;
        const answers =
          index === 0
            ? Object.values(shard as Shard).flatMap(([all, years]) => [all, ...Object.values(years)])
            : Object.values(shard as IdShard);
        const plain = packsOf(answers);
        expect(plain.size).toBe(1);
        for (const pack of plain) expect(sizes.get(dataPath(pack)!)).toBeLessThanOrEqual(PACK_BOUND);
        packed += answers.filter((a) => parseRef(a)!.at.range).length;
        // One form: a ref names one place, never a compressed copy.
        for (const a of answers) expect(a.includes('/')).toBe(false);
      }
    }
    expect(packed).toBeGreaterThan(20_000);
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
  it("keeps the full archive within the limits docs/deploy.md states for Cloudflare (asset files, and each one's size)", async () => {
    const deploy = await readFile(path.join(ROOT, 'docs/deploy.md'), 'utf8');
    const [, count, mib] = /at most ([\d,]+) asset files of (\d+) MiB each/.exec(deploy)!;
    const files = (await readdir(dist, { recursive: true, withFileTypes: true })).filter((e) => e.isFile());
    const sizes = await Promise.all(files.map(async (e) => (await stat(path.join(e.parentPath, e.name))).size));
    expect(files.length).toBeGreaterThan(1000);
    expect(files.length).toBeLessThanOrEqual(Number(count.replaceAll(',', '')));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(Number(mib) * 1024 * 1024);
  });

  it('is run by npm start as npm run build runs it: the same flags, in a process of its own', async () => {
    const { scripts } = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(scripts.build).toBe(`node ${BUILD_COMMAND.join(' ')}`);
    expect(scripts.start).not.toContain('--no-turbofan'); // the server keeps V8's optimizing compiler
  });

  it('is deterministic: two builds of the same source are identical byte for byte', async () => {
    const second = await buildInto(FULL_SOURCE, 'determinism');
    const [a, b] = await Promise.all([treeDigest(dist), treeDigest(second)]);
    expect(a.size).toBeGreaterThan(1000);
    expect(b).toEqual(a);
  });

  it('leaves the previous dist/ whole when a write fails midway', async () => {
    const { dir, out, summary, before } = await previousDist('failed');
    let writes = 0;
    const failing = {
      ...nodeFs,
      writeFile: (f: string, b: Uint8Array) =>
        ++writes > 500 ? Promise.reject(new Error('disk full (injected)')) : nodeFs.writeFile(f, b),
    };
    await expect(
      build({ source: FULL_SOURCE, out, summary, acceptChanges: true, fs: failing, log: () => {} }),
    ).rejects.toThrow('disk full (injected)');
    expect(writes).toBeGreaterThan(500);
    expect(await treeDigest(out)).toEqual(before);
    expect((await readdir(dir)).sort()).toEqual(['dist', 'summary.json']);
  });

  it('links each file the previous dist/ holds with the same bytes, and writes one it holds otherwise, and the manifest', async () => {
    const { out, summary, before } = await previousDist('relinked');
    const changed = path.join(out, 'index.html');
    await fs.appendFile(changed, ' '); // the previous dist/ no longer holds the page the build makes
    const done = { links: 0, writes: [] as string[] };
    const counting = {
      ...nodeFs,
      link: (existing: string, file: string) => nodeFs.link(existing, file).then(() => void done.links++),
      writeFile: (file: string, bytes: Uint8Array) =>
        nodeFs.writeFile(file, bytes).then(() => void done.writes.push(path.basename(file))),
    };
    await build({ source: SAMPLE_SOURCE, out, summary, fs: counting, log: () => {} });
    // The manifest is written afresh whatever it holds: its mtime is when dist/ was built.
    expect(done.writes.sort()).toEqual(['index.html', 'manifest.json']);
    expect(done.links).toBe(before.size - 2);
    expect(await treeDigest(out)).toEqual(before);
  });

  it('leaves the previous dist/ whole when the build process is killed midway', async () => {
    const { dir, out, summary, before } = await previousDist('killed');
    // node itself, not npm, so that SIGKILL reaches the process doing the writing.
    const child = spawn(
      process.execPath,
      ['build/build.ts', '--source', FULL_SOURCE, '--out', out, '--summary', summary, '--accept-changes'],
      { cwd: ROOT, stdio: 'ignore' },
    );
    // Kill it once it has started writing its temporary folder, before the swap.
    const writing = await eventually(
      async () => {
        const tmp = (await readdir(dir)).find((n) => n.startsWith('dist.tmp-'));
        return !!tmp && (await readdir(path.join(dir, tmp, '_data/r')).catch(() => [])).length > 50;
      },
      170_000,
      5,
    ); // under load, a full build took over 90 s to reach its writes (test/store/faults.test.ts)
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(writing).toBe(true);
    expect(await treeDigest(out)).toEqual(before);
    await recoverOutput(out);
    expect((await readdir(dir)).sort()).toEqual(['dist', 'summary.json']);
  }, 200_000);

  it("clears dead builds' leftovers from several starts at once, and leaves a running build's folder alone", async () => {
    const dir = await tempDir('recover');
    const out = path.join(dir, 'dist');
    const exited = (child: ReturnType<typeof spawn>) =>
      new Promise<number | null>((resolve) => child.once('exit', resolve));
    const gone = spawn(process.execPath, ['-e', '']);
    await exited(gone);
    const dead = gone.pid!;
    const fill = async (folder: string, files: number) => {
      for (let i = 0; i < files; i++)
        await fs.outputFile(path.join(folder, '_data/r', (i % 16).toString(16), `${i}.json`), '{}');
    };
    await fill(out, 3);
    for (const leftover of [`dist.tmp-${dead}-a`, `dist.tmp-${dead}-b`, `dist.old-${dead}`, `dist.gone-${dead}-c`])
      await fill(path.join(dir, leftover), 400);
    const live = `dist.tmp-${process.pid}-writing`; // a build of this very process, still writing
    await fill(path.join(dir, live), 3);
    const starts = Array.from({ length: 6 }, () => {
      const child = spawn(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          "import { recoverOutput } from './build/output.ts'; await recoverOutput(process.argv[1]);",
          out,
        ],
        { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      child.stderr!.on('data', (c) => (stderr += c));
      return exited(child).then((code) => ({ code, stderr }));
    });
    expect(await Promise.all(starts)).toEqual(new Array(6).fill({ code: 0, stderr: '' }));
    expect((await readdir(dir)).sort()).toEqual(['dist', live]);
    expect(
      (await readdir(path.join(out, '_data/r'), { recursive: true })).filter((n) => n.endsWith('.json')),
    ).toHaveLength(3);
  });
});
