/**
 * Precomputes every answer the API can give into content-addressed files.
 * Pure apart from compression: archive in, { path -> bytes } and the manifest
 * out. Writing them to disk is build.ts's job.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import pLimit from 'p-limit';
import { nominationMatch } from '../src/naive.ts';
import { dataPath, ID_LENGTH, MANIFEST_PATH, SHARD_COUNT, shardOf } from '../src/refs.ts';
import type { Archive, FileRef, Manifest, ManifestCategory, Shard } from '../src/types.ts';

/** Parallel compression jobs: zlib runs them on libuv's thread pool. */
export const DEFAULT_CONCURRENCY = 4;
/** Below this many bytes a compressed variant saves too little to be worth a file. */
export const COMPRESS_MIN_BYTES = 1024;

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);

export interface Artifacts {
  /** Every file to write under dist/, by path relative to dist/. */
  files: Map<string, Uint8Array>;
  manifest: Manifest;
  stats: { responses: number; names: number; nameYearPairs: number; categoryNames: number };
  /** Total bytes of the distinct answers, raw and as served compressed. */
  sizes: { raw: number; gzip: number; br: number };
}

const idOf = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex').slice(0, ID_LENGTH);

class Store {
  readonly files = new Map<string, Uint8Array>();
  /** Bytes a client downloads for every distinct answer, by encoding (identity where no variant is kept). */
  readonly sizes = { raw: 0, gzip: 0, br: 0 };
  private readonly refs = new Map<string, Promise<FileRef>>();
  constructor(private readonly limit: ReturnType<typeof pLimit>) {}

  /** Stores a response body once (by content) with its compressed variants; resolves to its ref. */
  put(body: string): Promise<FileRef> {
    const bytes = Buffer.from(body, 'utf8');
    const id = idOf(bytes);
    let ref = this.refs.get(id);
    if (!ref) {
      this.files.set(dataPath(id)!, bytes);
      this.sizes.raw += bytes.length;
      if (bytes.length < COMPRESS_MIN_BYTES) {
        this.sizes.gzip += bytes.length;
        this.sizes.br += bytes.length;
        ref = Promise.resolve(id);
      } else {
        ref = this.limit(() => this.compress(id, bytes));
      }
      this.refs.set(id, ref);
    }
    return ref;
  }

  private async compress(id: string, bytes: Buffer): Promise<FileRef> {
    const [gz, br] = await Promise.all([
      gzip(bytes, { level: 9 }),
      brotli(bytes, {
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: bytes.length > 512 * 1024 ? 10 : 11,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
          [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
        },
      }),
    ]);
    const gzId = idOf(gz);
    const brId = idOf(br);
    this.files.set(dataPath(gzId)!, gz);
    this.files.set(dataPath(brId)!, br);
    this.sizes.gzip += gz.length;
    this.sizes.br += br.length;
    return `${id}/${gzId}/${brId}`;
  }
}

const array = (parts: string[]) => `[${parts.join(',')}]`;

export async function buildArtifacts(
  archive: Archive,
  source: Manifest['source'],
  concurrency = DEFAULT_CONCURRENCY,
): Promise<Artifacts> {
  const store = new Store(pLimit(concurrency));
  const years = Object.keys(archive);

  // Category answers: one fragment per (year, position), grouped by full name.
  const byName = new Map<string, { year: string; pos: number; fragment: string }[]>();
  // Person and film answers: one fragment per (name, nomination), in archive order.
  const byPerson = new Map<string, { year: string; fragment: string }[]>();
  for (const year of years) {
    archive[year].forEach((c, pos) => {
      const fragment = JSON.stringify({ year, category: c.category, nominations: c.nominations });
      let list = byName.get(c.category);
      if (!list) byName.set(c.category, (list = []));
      list.push({ year, pos, fragment });
      for (const n of c.nominations) {
        const match = JSON.stringify(nominationMatch(year, c.category, n));
        for (const name of new Set([...n.primary, ...n.secondary])) {
          let refs = byPerson.get(name);
          if (!refs) byPerson.set(name, (refs = []));
          refs.push({ year, fragment: match });
        }
      }
    });
  }

  const archiveRef = store.put(JSON.stringify(archive));
  const yearRefs = years.map((y) => store.put(JSON.stringify({ [y]: archive[y] })));

  const categories = [...byName].map(([name, units]) => {
    const byYear = new Map<string, string[]>();
    const offsets: ManifestCategory['units'] = [];
    let at = 1; // after '['
    for (const u of units) {
      const length = Buffer.byteLength(u.fragment);
      offsets.push([Number(u.year), u.pos, at, at + length]);
      at += length + 1; // the ',' between elements
      let list = byYear.get(u.year);
      if (!list) byYear.set(u.year, (list = []));
      list.push(u.fragment);
    }
    return {
      name,
      all: store.put(array(units.map((u) => u.fragment))),
      units: offsets,
      years: [...byYear].map(([y, fragments]) => [y, store.put(array(fragments))] as const),
    };
  });

  let nameYearPairs = 0;
  const people = [...byPerson].map(([name, matches]) => {
    const byYear = new Map<string, string[]>();
    for (const m of matches) {
      let list = byYear.get(m.year);
      if (!list) byYear.set(m.year, (list = []));
      list.push(m.fragment);
    }
    nameYearPairs += byYear.size;
    return {
      name,
      all: store.put(array(matches.map((m) => m.fragment))),
      years: [...byYear].map(([y, fragments]) => [y, store.put(array(fragments))] as const),
    };
  });

  const resolveYears = async (entries: (readonly [string, Promise<FileRef>])[]) => {
    const out: Record<string, FileRef> = {};
    for (const [y, ref] of entries) out[y] = await ref;
    return out;
  };

  const shards: Shard[] = Array.from({ length: SHARD_COUNT }, () => ({}));
  for (const p of people) shards[shardOf(p.name)][p.name] = [await p.all, await resolveYears(p.years)];

  const manifest: Manifest = {
    format: 1,
    source,
    yearRange: [Number(years[0]), Number(years[years.length - 1])],
    archive: await archiveRef,
    years: Object.fromEntries(await Promise.all(years.map(async (y, i) => [y, await yearRefs[i]]))),
    categories: await Promise.all(
      categories.map(async (c) => ({ name: c.name, all: await c.all, units: c.units, years: await resolveYears(c.years) })),
    ),
    shards: await Promise.all(shards.map((s) => store.put(JSON.stringify(s)))),
  };
  const responses = store.files.size; // before the manifest joins
  store.files.set(MANIFEST_PATH, Buffer.from(JSON.stringify(manifest)));
  return {
    files: store.files,
    manifest,
    sizes: store.sizes,
    stats: { responses, names: byPerson.size, nameYearPairs, categoryNames: byName.size },
  };
}
