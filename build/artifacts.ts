/**
 * Precomputes every answer the API can give into content-addressed files.
 * Pure apart from compression: archive in, { path -> bytes } and the manifest
 * out. Writing them to disk is build.ts's job.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import pLimit from 'p-limit';
import { dataPath, ID_LENGTH, MANIFEST_PATH, SHARD_COUNT, shardOf } from '../src/refs.ts';
import type { Archive, CategoryMatch, FileRef, FilmMatch, IdShard, Manifest, PersonMatch, Shard } from '../src/types.ts';
import type { NominationIds } from './import.ts';

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
  stats: { responses: number; names: number; nameYearPairs: number; categoryNames: number; ids: number };
  /** Total bytes of the distinct answers, raw and as served compressed. */
  sizes: { raw: number; gzip: number; br: number };
}

const idOf = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex').slice(0, ID_LENGTH);

class Store {
  readonly files = new Map<string, Uint8Array>();
  /** Bytes a client downloads for every distinct answer, by encoding (identity where no variant is kept). */
  readonly sizes = { raw: 0, gzip: 0, br: 0 };
  private readonly refs = new Map<string, Promise<FileRef>>();
  private readonly limit: ReturnType<typeof pLimit>;

  constructor(limit: ReturnType<typeof pLimit>) {
    this.limit = limit;
  }

  /** Stores a response body once (by content), with its compressed variants unless it is never sent as it is; resolves to its ref. */
  put(body: string, { variants = true } = {}): Promise<FileRef> {
    const bytes = Buffer.from(body, 'utf8');
    const id = idOf(bytes);
    let ref = this.refs.get(id);
    if (!ref) {
      this.files.set(dataPath(id)!, bytes);
      if (!variants) {
        ref = Promise.resolve(id); // read, never sent: not an answer, so not in the answers' sizes either
      } else if (bytes.length < COMPRESS_MIN_BYTES) {
        this.sizes.raw += bytes.length;
        this.sizes.gzip += bytes.length;
        this.sizes.br += bytes.length;
        ref = Promise.resolve(id);
      } else {
        this.sizes.raw += bytes.length;
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

/** Byte ranges of each element of `[a,b,...]` built by `array(parts)`. */
function slices(parts: string[]): [number, number][] {
  const out: [number, number][] = [];
  let at = 1; // after '['
  for (const part of parts) {
    const length = Buffer.byteLength(part);
    out.push([at, at + length]);
    at += length + 1; // the ',' between elements
  }
  return out;
}

/** Appends `value` to the list at `key`, creating it on first use. */
function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  let list = map.get(key);
  if (!list) map.set(key, (list = []));
  list.push(value);
}

/** A fragment of every lookup's answer, grouped the way the stored answers are. */
interface Fragments {
  /** Category answers by full name: the CategoryMatch across years and the CategoryYearMatch at its year. */
  byName: Map<string, { year: string; pos: number; all: string; atYear: string }[]>;
  /** Person answers by exact name: the PersonMatch across years and the FilmMatch at its year. */
  byPerson: Map<string, { year: string; all: string; atYear: string }[]>;
  /** Id answers by IMDb id: the PersonMatch of every nomination whose source row carries it. */
  byId: Map<string, string[]>;
}

/** Every answer's elements, serialised once in the spec's key order, in archive order. */
function fragments(archive: Archive, ids: NominationIds): Fragments {
  const byName: Fragments['byName'] = new Map();
  const byPerson: Fragments['byPerson'] = new Map();
  const byId: Fragments['byId'] = new Map();
  for (const [year, categories] of Object.entries(archive)) {
    categories.forEach((c, pos) => {
      const atYear = JSON.stringify(c);
      const all = JSON.stringify({ year, category: c.category, nominations: c.nominations } satisfies CategoryMatch);
      push(byName, c.category, { year, pos, all, atYear });
      for (const nomination of c.nominations) {
        const person = JSON.stringify({ year, category: c.category, nomination } satisfies PersonMatch);
        const film = JSON.stringify({ category: c.category, nomination } satisfies FilmMatch);
        for (const name of new Set([...nomination.primary, ...(nomination.secondary ?? [])])) push(byPerson, name, { year, all: person, atYear: film });
        for (const id of ids.get(nomination) ?? []) push(byId, id, person);
      }
    });
  }
  return { byName, byPerson, byId };
}

/**
 * Every category of every ceremony as a CategoryMatch, in archive order, with
 * where each element sits: what any category text matching several names is
 * cut from at run time, from one file rather than one per name.
 */
function joinTable(archive: Archive, byName: Fragments['byName']): { parts: string[]; units: Manifest['joins']['units'] } {
  const index = new Map([...byName.keys()].map((name, i) => [name, i]));
  const all = new Map([...byName.values()].flat().map((u) => [`${u.year}\u0000${u.pos}`, u.all]));
  const parts: string[] = [];
  const places: [number, number, number][] = [];
  for (const [year, categories] of Object.entries(archive)) {
    categories.forEach((c, pos) => {
      parts.push(all.get(`${year}\u0000${pos}`)!);
      places.push([index.get(c.category)!, Number(year), pos]);
    });
  }
  const offsets = slices(parts);
  return { parts, units: places.map((p, i) => [...p, ...offsets[i]]) };
}

/** Stores an answer across all years and one answer per year, from fragments carrying both. */
function storeGrouped(store: Store, units: { year: string; all: string; atYear: string }[]) {
  const byYear = new Map<string, string[]>();
  for (const u of units) push(byYear, u.year, u.atYear);
  return {
    all: store.put(array(units.map((u) => u.all))),
    years: [...byYear].map(([y, parts]) => [y, store.put(array(parts))] as const),
  };
}

/**
 * The id index: each IMDb id's answer, stored like every other (one file per
 * distinct answer, so a person's id answer that equals their name answer costs
 * nothing), and the shards naming them. A shard is read, never sent: no
 * compressed variants.
 */
async function idShards(store: Store, byId: Fragments['byId']): Promise<FileRef[]> {
  const shards: IdShard[] = Array.from({ length: SHARD_COUNT }, () => ({}));
  const answers = [...byId].map(([id, parts]) => [id, store.put(array(parts))] as const);
  for (const [id, ref] of answers) shards[shardOf(id)][id] = await ref;
  return Promise.all(shards.map((s) => store.put(JSON.stringify(s), { variants: false })));
}

export async function buildArtifacts(
  archive: Archive,
  source: Manifest['source'],
  ids: NominationIds = new Map(),
  concurrency = DEFAULT_CONCURRENCY,
): Promise<Artifacts> {
  const store = new Store(pLimit(concurrency));
  const years = Object.keys(archive);
  const { byName, byPerson, byId } = fragments(archive, ids);

  const archiveRef = store.put(JSON.stringify(archive));
  const yearParts = years.map((y) => archive[y].map((c) => JSON.stringify(c)));
  const yearRefs = yearParts.map((parts) => store.put(array(parts)));

  const categories = [...byName].map(([name, units]) => ({ name, ...storeGrouped(store, units) }));
  const joins = joinTable(archive, byName);
  const joinsRef = store.put(array(joins.parts), { variants: false });

  let nameYearPairs = 0;
  const people = [...byPerson].map(([name, matches]) => {
    const stored = storeGrouped(store, matches);
    nameYearPairs += stored.years.length;
    return { name, ...stored };
  });

  const resolveYears = async (entries: (readonly [string, Promise<FileRef>])[]) => {
    const out: Record<string, FileRef> = {};
    for (const [y, ref] of entries) out[y] = await ref;
    return out;
  };

  const shards: Shard[] = Array.from({ length: SHARD_COUNT }, () => ({}));
  for (const p of people) shards[shardOf(p.name)][p.name] = [await p.all, await resolveYears(p.years)];

  const idRefs = idShards(store, byId);

  const manifest: Manifest = {
    format: 4,
    source,
    yearRange: [Number(years[0]), Number(years[years.length - 1])],
    archive: await archiveRef,
    years: Object.fromEntries(await Promise.all(years.map(async (y, i) => [y, await yearRefs[i]]))),
    yearSlices: Object.fromEntries(years.map((y, i) => [y, slices(yearParts[i])])),
    categories: await Promise.all(categories.map(async (c) => ({ name: c.name, all: await c.all, years: await resolveYears(c.years) }))),
    joins: { all: await joinsRef, units: joins.units },
    shards: await Promise.all(shards.map((s) => store.put(JSON.stringify(s)))),
    ids: await idRefs,
  };
  const responses = store.files.size; // before the manifest joins
  store.files.set(MANIFEST_PATH, Buffer.from(JSON.stringify(manifest)));
  return {
    files: store.files,
    manifest,
    sizes: store.sizes,
    stats: { responses, names: byPerson.size, nameYearPairs, categoryNames: byName.size, ids: byId.size },
  };
}
