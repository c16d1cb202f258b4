/**
 * Faults while the Node server runs: a year file, a person-index shard and
 * the pack of its answers deleted or corrupted get 500
 * `{"error":"Error fetching data"}` on the routes that need them, every other
 * route keeps answering, and answers come back once the file is restored; a
 * manifest of another layout is refused; a build killed midway leaves the
 * previous dist/ serving the same answers.
 */
import { spawn } from 'node:child_process';
import { readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRef, dataPath, MANIFEST_PATH, shardOf } from '../../src/store/refs.ts';
import type { Manifest, Shard } from '../../src/shared/types.ts';
import { eventually, type RawReply, rawRequest } from '../helpers/http.ts';
import { keyWatchingLog, makeKeys, storeKeys } from '../helpers/keys.ts';
import { FULL_SOURCE, ROOT } from '../helpers/paths.ts';
import { QUICK } from '../helpers/quick.ts';
import { listen, type Running, sampleSandbox, type Sandbox } from '../helpers/servers.ts';

const FETCH_ERROR = '{"error":"Error fetching data"}';

let box: Sandbox;
let key: string;
let server: Running;
let manifest: Manifest;
const log = keyWatchingLog(10_000);

beforeAll(async () => {
  box = await sampleSandbox('faults');
  const made = makeKeys(1, 'faults');
  key = made.keys[0];
  storeKeys(box.keysDb, made.records);
  server = await listen({
    dist: box.dist,
    keysDb: box.keysDb,
    rateLimitPerMinute: 1_000_000,
    revalidateMs: 20,
    log: log.log,
  });
  manifest = JSON.parse(await readFile(path.join(box.dist, MANIFEST_PATH), 'utf8'));
}, 60_000);

afterAll(async () => {
  await server?.close();
  await box?.remove();
});

const get = (route: string, headers: Record<string, string> = {}): Promise<RawReply> =>
  rawRequest(server.port, 'GET', `${route}/apikey=${key}`, headers);
/** Where the identity bytes of a manifest reference live under dist/. */
const fileOf = (ref: string) => path.join(box.dist, dataPath(parseRef(ref)!.id)!);

const ROUTES = [
  '/archive/year=1930',
  '/archive/year=2026',
  '/archive',
  '/person/name=Emma%20Stone',
  '/person/name=Metro-Goldwyn-Mayer',
  '/movie/name=Sinners/year=2026',
  '/award/name=Actor',
  '/award/name=Best%20Picture/year=2026',
];

/** Every route's identity answer now. */
async function snapshot(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const route of ROUTES) {
    const r = await get(route);
    out.set(route, `${r.status} ${r.body.toString('utf8')}`);
  }
  return out;
}

/**
 * Damages `file`, waits until `broken` answers 500 with the fetch error, checks
 * that routes not in `affected` answer as before, restores the file and waits
 * for every answer to be back.
 */
async function damaged(file: string, damage: (bytes: Buffer) => Promise<void>, broken: string, affected: string[]) {
  const before = await snapshot();
  for (const [route, answer] of before) expect(answer.startsWith('200 '), route).toBe(true);
  const original = await readFile(file);
  await damage(original);
  try {
    expect(await eventually(async () => (await get(broken)).status === 500, 5_000)).toBe(true);
    const reply = await get(broken);
    expect(reply.body.toString()).toBe(FETCH_ERROR);
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
    const during = await snapshot();
    for (const [route, answer] of during) {
      if (affected.includes(route)) expect(answer, route).toBe(`500 ${FETCH_ERROR}`);
      else expect(answer, route).toBe(before.get(route));
    }
  } finally {
    await writeFile(file, original);
  }
  expect(await eventually(async () => (await get(broken)).status === 200, 5_000)).toBe(true);
  expect(await snapshot()).toEqual(before);
}

/** A name in the sample whose person-index shard is `shard`. */
function nameIn(shard: number): string {
  const names = [
    'Emma Stone',
    'Metro-Goldwyn-Mayer',
    'Sinners',
    'Fox',
    'Wings',
    'Hamnet',
    'Bugonia',
    'Emil Jannings',
    'Timothée Chalamet',
  ];
  return names.find((n) => shardOf(n, manifest.shards.length) === shard)!;
}

describe('a year file', () => {
  const file = () => fileOf(manifest.years['2026']);

  it('deleted: that year answers 500 Error fetching data, others keep working, and it comes back when restored', async () => {
    await damaged(file(), () => unlink(file()), '/archive/year=2026', ['/archive/year=2026']);
  });

  it('corrupted: the same, since its bytes no longer match their hash', async () => {
    await damaged(
      file(),
      (bytes) => writeFile(file(), Buffer.concat([bytes.subarray(0, 10), Buffer.from('XXXX'), bytes.subarray(14)])),
      '/archive/year=2026',
      ['/archive/year=2026'],
    );
  });
});

describe('a person-index shard', () => {
  const shard = () => shardOf('Emma Stone', manifest.shards.length);
  const file = () => fileOf(manifest.shards[shard()]);

  it('holds the name the tests look up, and another name lives elsewhere', () => {
    expect(nameIn(shard())).toBe('Emma Stone');
    expect(shardOf('Metro-Goldwyn-Mayer', manifest.shards.length)).not.toBe(shard());
  });

  // Every name in that shard fails; Sinners shares it or not depending on the hash, so it is listed only if it does.
  const affected = () => [
    '/person/name=Emma%20Stone',
    ...(shardOf('Sinners', manifest.shards.length) === shard() ? ['/movie/name=Sinners/year=2026'] : []),
  ];

  it('deleted: names in it answer 500, names elsewhere and other routes keep working, and it comes back when restored', async () => {
    await damaged(file(), () => unlink(file()), '/person/name=Emma%20Stone', affected());
  });

  it('corrupted: the same', async () => {
    await damaged(
      file(),
      (bytes) => writeFile(file(), bytes.subarray(0, bytes.length - 3)),
      '/person/name=Emma%20Stone',
      affected(),
    );
  });

  it('replaced by valid JSON that is not the indexed file: refused too, by its hash', async () => {
    const stored = JSON.parse(await readFile(file(), 'utf8')) as Shard;
    const forged: Shard = { ...stored, 'Emma Stone': [manifest.years['1930'], {}] };
    await damaged(file(), () => writeFile(file(), JSON.stringify(forged)), '/person/name=Emma%20Stone', affected());
  });
});

describe('the pack of a person-index shard', () => {
  const shard = () => shardOf('Emma Stone', manifest.shards.length);
  const emmaStone = async () => {
    const entries = JSON.parse(await readFile(fileOf(manifest.shards[shard()]), 'utf8')) as Shard;
    return parseRef(entries['Emma Stone'][0])!.at;
  };
  const file = async () => path.join(box.dist, dataPath((await emmaStone()).file)!);
  // The pack holds the answers of every name in that shard, and only theirs.
  const affected = () => [
    '/person/name=Emma%20Stone',
    ...(shardOf('Sinners', manifest.shards.length) === shard() ? ['/movie/name=Sinners/year=2026'] : []),
  ];

  it("holds Emma Stone's answer as a range of a gzipped file shared with other answers", async () => {
    const { file: pack, range } = await emmaStone();
    expect(range).not.toBeNull();
    const inflated = gunzipSync(await readFile(path.join(box.dist, dataPath(pack)!)));
    expect(inflated.length).toBeGreaterThan(range![1] - range![0]);
    expect(JSON.parse(inflated.subarray(...range!).toString('utf8'))).toEqual(
      JSON.parse((await get('/person/name=Emma%20Stone')).body.toString('utf8')),
    );
  });

  it('corrupted in one byte: names in it answer 500, the rest keeps working, and it comes back when restored', async () => {
    const pack = await file();
    await damaged(
      pack,
      (bytes) =>
        writeFile(
          pack,
          Buffer.from(bytes).fill(bytes[bytes.length >> 1] ^ 0x20, bytes.length >> 1, (bytes.length >> 1) + 1),
        ),
      '/person/name=Emma%20Stone',
      affected(),
    );
  });

  it('deleted: the same', async () => {
    const pack = await file();
    await damaged(pack, () => unlink(pack), '/person/name=Emma%20Stone', affected());
  });
});

describe('a manifest of another layout', () => {
  it('is refused: lookups answer 500 and /health 503, until the manifest is restored', async () => {
    const file = path.join(box.dist, MANIFEST_PATH);
    const original = await readFile(file);
    await writeFile(file, JSON.stringify({ ...manifest, format: 4 }));
    try {
      expect(await eventually(async () => (await get('/archive/year=2026')).status === 500, 5_000)).toBe(true);
      expect((await get('/person/name=Emma%20Stone')).body.toString()).toBe(FETCH_ERROR);
      expect((await rawRequest(server.port, 'GET', '/health')).status).toBe(503);
    } finally {
      await writeFile(file, original);
    }
    expect(await eventually(async () => (await get('/archive/year=2026')).status === 200, 5_000)).toBe(true);
  });
});

// A build process: not in npm run test:quick, which starts none.
describe.skipIf(QUICK)('a build killed midway', () => {
  it('leaves the previous dist/ serving identical answers', async () => {
    const before = await snapshot();
    const tree = await readdir(box.dist, { recursive: true });
    // Kill the build as soon as its temporary output folder appears: the
    // full archive is about 1,200 files, written in well under a second.
    const child = spawn(
      process.execPath,
      [
        'build/build.ts',
        '--source',
        FULL_SOURCE,
        '--out',
        box.dist,
        '--summary',
        path.join(box.dir, 'killed-summary.json'),
      ],
      {
        cwd: ROOT,
        stdio: 'ignore',
        detached: true,
      },
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const writing = async () => (await readdir(box.dir)).some((n) => n.startsWith('dist.tmp-'));
    // A full build under load (at load 13 beside another full build) took over 90 s to reach its writes
    // when it also compressed every answer (this case failed so). Wait up to 170 s.
    const sawWriting = await eventually(writing, 170_000, 5);
    process.kill(-child.pid!, 'SIGKILL');
    expect(await exited).toBe(null);
    expect(sawWriting).toBe(true);

    expect(await snapshot()).toEqual(before);
    expect((await readdir(box.dist, { recursive: true })).sort()).toEqual(tree.sort());
    // Leftovers of the killed build sit beside dist/, never inside it; the next build clears them.
    for (const leftover of (await readdir(box.dir)).filter((n) => n.startsWith('dist.tmp-')))
      await rm(path.join(box.dir, leftover), { recursive: true, force: true });
  }, 200_000);
});

describe('logs', () => {
  it('say why data failed and never hold a whole key', () => {
    expect(log.lines.some((l) => /^data error: (missing|corrupt)/.test(l))).toBe(true);
    expect(log.leaks).toEqual([]);
  });
});
