/**
 * The answer cache counts what its entries really hold: the bytes it counts
 * per entry are within 2x of the heap (and array buffers) measured per entry
 * after a full collection, for stored answers (full archive) and for
 * searches; and 200,000 distinct searches through the front door grow the
 * process by no more than the cache's documented bound (docs/development.md).
 *
 * That last run is `npm run test:stress` (ANSWER_CACHE_SEARCHES=200000): it
 * was most of `npm run test:quick`'s time (247 s of wall under load). `npm
 * test` sends 50,000: a search counts about 1 KB, so the 16 MiB cache fills
 * near 17,000 and the run still makes it drop three times what it holds; the
 * test also checks that the cache did fill.
 */
import v8 from 'node:v8';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi } from '../../src/api/handler.ts';
import { Keys } from '../../src/keys/rules.ts';
import { ArchiveReader } from '../../src/store/archive.ts';
import { DiskData } from '../../adapters/_node/disk-data.ts';
import type { Manifest, Shard } from '../../src/shared/types.ts';
import { dataPath, parseRef } from '../../src/store/refs.ts';
import { makeKeys, memoryKeys } from '../helpers/keys.ts';
import { heapUsed } from '../helpers/memory.ts';
import { FULL_SOURCE } from '../helpers/paths.ts';
import { sampleSandbox, type Sandbox } from '../helpers/servers.ts';
import { wholeNumberSetting } from '../../src/shared/limits.ts';
import { sharedBuild } from '../helpers/temp.ts';

const MiB = 1024 * 1024;
/** The answer cache's default bound, as documented. */
const ANSWER_BYTES = 16 * MiB;

/** Heap and array buffers retained, after a full collection and the task after it (array buffers are released then). */
async function retained(): Promise<number> {
  heapUsed();
  await new Promise((resolve) => setTimeout(resolve, 10));
  return heapUsed() + process.memoryUsage().arrayBuffers;
}

/** Resident memory after a full collection. */
interface Sample {
  rss: number;
  /** What the heap holds after a collection. */
  live: number;
  /** What V8 reserved for its young generation (new space), which it grows to its maximum under load and keeps. */
  young: number;
}

function sample(): Sample {
  const live = heapUsed();
  const young = v8
    .getHeapSpaceStatistics()
    .filter((s) => s.space_name.startsWith('new_'))
    .reduce((sum, s) => sum + s.space_size, 0);
  return { rss: process.memoryUsage().rss, live, young };
}

/** Distinct searches through the front door (ANSWER_CACHE_SEARCHES, see above): 50,000 when unset. */
const SEARCHES = wholeNumberSetting(
  'ANSWER_CACHE_SEARCHES',
  process.env.ANSWER_CACHE_SEARCHES,
  50_000,
  20_000,
  10_000_000,
);

/** A text no one asked before, `i` apart: some find names, most nothing. */
const distinctText = (i: number) =>
  `${['emma', 'stone', 'janet', 'wings', 'actor', 'jannings', 'best'][i % 7]}${i % 3 ? ' ' : ''}${i.toString(36)}`;

let box: Sandbox;

beforeAll(async () => {
  box = await sampleSandbox('answer-cache');
}, 600_000);
afterAll(() => box?.remove());

describe('what the answer cache counts', () => {
  it(`keeps the process within the bound through ${SEARCHES.toLocaleString('en')} distinct searches with one key`, async () => {
    const { keys, records } = makeKeys(1, 'answer-cache');
    const api = createApi({
      data: new DiskData(box.dist, { revalidateMs: 600_000 }),
      keys: new Keys(memoryKeys(records)),
      rateLimitPerMinute: 1e9,
    });
    const ask = async (text: string) => {
      const out = await api.reply({
        method: 'GET',
        url: `/search/name=${encodeURIComponent(text)}/apikey=${keys[0]}`,
        header: () => null,
      });
      expect(out.status).toBe(200);
    };
    // warm: every file read and parsed, the code compiled
    for (let i = 0; i < 2_000; i++) await ask(distinctText(2e9 + i));
    const start = sample();
    let end = start;
    // the process when the cache first stood at its bound: from then on it drops as much as it keeps
    let atFull: Sample | null = null;
    for (let i = 0; i < SEARCHES; i++) {
      await ask(distinctText(i));
      if (i % 5_000 === 4_999) {
        end = sample();
        if (atFull === null && api.archive.answerBytes > 0.9 * ANSWER_BYTES) atFull = end;
      }
    }
    const mib = (n: number) => (n / MiB).toFixed(1);
    console.log(
      `${SEARCHES.toLocaleString('en')} distinct searches: RSS ${mib(start.rss)} -> ${mib(atFull?.rss ?? 0)} MiB when the cache was full -> ${mib(end.rss)} MiB, of which V8's young generation ${mib(start.young)} -> ${mib(end.young)} MiB; live heap ${mib(start.live)} -> ${mib(atFull?.live ?? 0)} MiB when the cache was full -> ${mib(end.live)} MiB; the answer cache counts ${mib(api.archive.answerBytes)} MiB`,
    );
    expect(api.archive.answerBytes).toBeLessThanOrEqual(ANSWER_BYTES);
    // Full, so what was measured is a cache dropping entries at its bound, not one still filling.
    expect(atFull).not.toBeNull();
    // Bounded: once the cache is full, what the process holds after a collection stops growing.
    expect(end.live - atFull!.live).toBeLessThanOrEqual(2 * MiB);
    // RSS beyond the young generation V8 enlarges to its own maximum under a high allocation rate and keeps:
    // at most four times the cache's bound (14 to 35 MiB measured on 2 cores, the higher beside a second test
    // file: what the old space and malloc keep in reserve; the live heap above is what shows it stops growing).
    expect(end.rss - end.young - (start.rss - start.young)).toBeLessThanOrEqual(4 * ANSWER_BYTES);
  }, 300_000);

  it('counts a stored answer within 2x of the heap it holds (20,000 person answers of the full archive)', async () => {
    // The run's shared build, asked for only now: the RSS check above runs first, in a process no full build has grown.
    const source = new DiskData(await sharedBuild(FULL_SOURCE), { revalidateMs: 600_000 });
    const reader = new ArchiveReader({ answerBytes: 1024 * MiB, jsonBytes: 1024 * MiB });
    const manifest = (await reader.manifest(source)) as Manifest;
    // Every name shard read and parsed first, so what is measured is the answers alone.
    const names: string[] = [];
    for (const ref of manifest.shards) {
      const { file, range } = parseRef(ref)!.at;
      const bytes = (await source.read(dataPath(file)!))!;
      const shard = JSON.parse(new TextDecoder().decode(range ? bytes.subarray(...range) : bytes)) as Shard;
      const [first, ...rest] = Object.keys(shard);
      if (first) await reader.find(source, { route: 'personByName', name: first } as never);
      names.push(...rest.slice(0, Math.ceil(20_000 / manifest.shards.length)));
    }
    const before = await retained();
    const counted = reader.answerBytes;
    for (const name of names)
      expect(await reader.find(source, { route: 'personByName', name } as never)).not.toBeNull();
    const perEntry = ((await retained()) - before) / names.length;
    const countedPerEntry = (reader.answerBytes - counted) / names.length;
    console.log(
      `${names.length} stored answers: ${countedPerEntry.toFixed(0)} B counted, ${perEntry.toFixed(0)} B held each`,
    );
    expect(names.length).toBeGreaterThan(10_000);
    expect(countedPerEntry).toBeGreaterThanOrEqual(perEntry / 2);
    expect(countedPerEntry).toBeLessThanOrEqual(perEntry * 2);
  }, 300_000); // it may make the run's shared build (up to about 2 minutes under load)

  it('counts a search within 2x of the heap it holds (20,000 distinct searches)', async () => {
    const source = new DiskData(box.dist, { revalidateMs: 600_000 });
    const reader = new ArchiveReader({ answerBytes: 1024 * MiB });
    // every search shard parsed
    for (let i = 0; i < 500; i++) await reader.find(source, { route: 'search', name: distinctText(1e9 + i) } as never);
    const before = await retained();
    const counted = reader.answerBytes;
    for (let i = 0; i < 20_000; i++) await reader.find(source, { route: 'search', name: distinctText(i) } as never);
    const perEntry = ((await retained()) - before) / 20_000;
    const countedPerEntry = (reader.answerBytes - counted) / 20_000;
    console.log(`20,000 searches: ${countedPerEntry.toFixed(0)} B counted, ${perEntry.toFixed(0)} B held each`);
    expect(countedPerEntry).toBeGreaterThanOrEqual(perEntry / 2);
    expect(countedPerEntry).toBeLessThanOrEqual(perEntry * 2);
  }, 120_000);
});
