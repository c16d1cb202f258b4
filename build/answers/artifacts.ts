/**
 * Precomputes every answer a text names (the archive, each year, each full
 * category name, person, film and id) into content-addressed files, and the
 * index a text matching several category names is joined by at run time,
 * each answer once, as sent (a transport compresses: the Node server,
 * adapters/_node/encoding.ts, or the CDN): large answers as files of their
 * own, small ones packed together by the shard that names them, so that the
 * output stays a few thousand files (a host may cap their number) and a
 * cold lookup reads few. Pure apart from the packs' gzip: archive in,
 * { path -> bytes } and the manifest out. Writing them to disk is build.ts's job.
 */
import { hash } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import pLimit from 'p-limit';
import {
  contentId,
  dataPath,
  ID_SHARD_COUNT,
  MANIFEST_PATH,
  RECORD_SHARD_COUNT,
  refOf,
  SHARD_COUNT,
  shardOf,
} from '../../src/store/refs.ts';
import {
  type Archive,
  type CategoryIndex,
  type CategoryMatch,
  type FileRef,
  type IdShard,
  LAYOUT_FORMAT,
  type Manifest,
  type Shard,
  type DatasetList,
} from '../../src/shared/types.ts';
import { type NameFacts, type NominationIds, noFacts } from '../archive/import.ts';
import { searchIndex } from './search-index.ts';
import { categoryList } from '../../src/client/client.ts';
import { storedFiles } from '../../src/shared/search.ts';
import { ATTRIBUTION, type DatasetFile, LICENCE } from './dataset.ts';
import type { Records } from './records.ts';
import { cachedGzip } from './gzip-cache.ts';

/** Packs the small category answers are spread over (by the category's place in the manifest). */
const CATEGORY_PACKS = 16;
/** Parallel gzip jobs (the packs'): zlib runs them on libuv's thread pool. */
export const DEFAULT_CONCURRENCY = 4;
/**
 * The pack of the lists (categories, awards, dataset), so that every answer
 * sent that is a file of its own is large (the archive, a year, a name's
 * of more than PACK_MAX_BYTES) and the runtime knows whether an answer is
 * worth compressing from its ref alone (src/api/handler.ts, `encodable`).
 */
const LISTS = 'lists';

const gzip = promisify(zlib.gzip);
export interface Artifacts {
  /** Every file to write under dist/, by path relative to dist/. */
  files: Map<string, Uint8Array>;
  manifest: Manifest;
  stats: { responses: number; names: number; nameYearPairs: number; categoryNames: number; ids: number };
  /** Total bytes of the distinct answers sent. */
  sizes: { raw: number };
}

/** An answer's id, by one-shot `hash`: without a Hash object for each of some 70,000 answers, a fifth less time. */
const idOf = (bytes: Uint8Array) => contentId(hash('sha256', bytes));

/**
 * The packs' gzip level. The full archive's 51 MB of packs take 0.49 s of CPU
 * at level 3 and 0.92 s at level 6 (a first build's), for 7.72 MB rather than
 * 6.84 MB in dist/; a reader inflates either in the same time.
 */
const PACK_GZIP_LEVEL = 3;

/** Answers up to this many bytes go into their group's pack; larger ones are files of their own. */
export const PACK_MAX_BYTES = 16 * 1024;

/** An answer waiting in a pack: its bytes, and how its ref is handed back. */
interface Slot {
  id: string;
  bytes: Uint8Array;
  resolve: (ref: FileRef) => void;
}

/** What `Store.put` is told of an answer. */
export interface PutOptions {
  /** Kept for callers: defaults `sent`. Encodings are no longer stored (a transport compresses). */
  variants?: boolean;
  /** Whether clients are sent it (false: an index file, read and never sent); default `variants`, else true. */
  sent?: boolean;
  /** The pack it goes into when small (or whatever its size, with `anySize`); without one, a file of its own. */
  group?: string;
  anySize?: boolean;
}

class Store {
  readonly files = new Map<string, Uint8Array>();
  /** Bytes a client downloads for every distinct answer. */
  readonly sizes = { raw: 0 };
  private readonly refs = new Map<string, Promise<FileRef>>();
  /** Answers already in `sizes`, with their bytes: an answer stored in two packs is still one answer. */
  private readonly counted = new Map<string, number>();
  /** Answers waiting for their pack, by group, in the order they were put (so a build is deterministic). */
  private readonly packs = new Map<string, Slot[]>();
  private readonly limit: ReturnType<typeof pLimit>;
  /** Where packs' gzip is remembered by content (gzip-cache.ts); none: every pack gzipped. */
  private readonly gzipCache?: string;

  constructor(limit: ReturnType<typeof pLimit>, gzipCache?: string) {
    this.limit = limit;
    this.gzipCache = gzipCache;
  }

  /**
   * Stores a response body once (by content); resolves to its ref. A small
   * one put with a `group` goes into that group's
   * pack, whose refs resolve once {@link seal} has written the packs; with
   * `anySize`, whatever its size (a record: packs are gzipped on disk).
   */
  put(body: string, { variants = true, sent = variants, group, anySize = false }: PutOptions = {}): Promise<FileRef> {
    const bytes = Buffer.from(body, 'utf8');
    const id = idOf(bytes);
    const packed = group !== undefined && (anySize || bytes.length <= PACK_MAX_BYTES);
    const key = `${packed ? group : ''}\u0000${id}`;
    let ref = this.refs.get(key);
    if (!ref) {
      if (sent) this.count(id, bytes.length);
      ref = packed ? this.slot(group, { id, bytes }) : Promise.resolve(this.own(id, bytes));
      this.refs.set(key, ref);
    }
    return ref;
  }

  /**
   * Writes every pack but those of the groups `open` (still being filled)
   * and resolves the refs into them; call once every answer of a pack is
   * put (again after putting more).
   */
  async seal(open: string[] = []): Promise<void> {
    const groups = [...this.packs].filter(([group]) => !open.includes(group));
    for (const [group] of groups) this.packs.delete(group);
    await Promise.all(groups.map(([, slots]) => this.sealGroup(slots)));
  }

  /** One group's pack, gzipped; every group at once, so their gzip runs on the thread pool together. */
  private async sealGroup(slots: Slot[]): Promise<void> {
    const pack = new Pack();
    const placed = slots.map((slot) => pack.add(slot.bytes));
    const id = await this.writeGzipped(pack);
    slots.forEach((slot, i) => slot.resolve(refOf(slot.id, { id, start: placed[i][0], end: placed[i][1] })));
  }

  /** Stores bytes under their id. */
  private write(bytes: Uint8Array): string {
    const id = idOf(bytes);
    this.files.set(dataPath(id)!, bytes);
    return id;
  }

  /**
   * Stores a pack of answers gzipped (JSON of many small answers shrinks
   * about six times; a reader inflates it once), at PACK_GZIP_LEVEL.
   */
  private async writeGzipped(pack: Pack): Promise<string> {
    const gzipped = (input: Buffer) => gzip(input, { level: PACK_GZIP_LEVEL });
    const packed = () => cachedGzip(Buffer.concat(pack.chunks), PACK_GZIP_LEVEL, gzipped, this.gzipCache);
    return this.write(await this.limit(packed));
  }

  private slot(group: string, slot: Omit<Slot, 'resolve'>): Promise<FileRef> {
    return new Promise((resolve) => push(this.packs, group, { ...slot, resolve }));
  }

  private own(id: string, bytes: Uint8Array): FileRef {
    this.files.set(dataPath(id)!, bytes);
    return id;
  }

  /** Counts an answer's bytes as sent once, whichever packs hold it (an index file, read and never sent, is not one). */
  private count(id: string, length: number): void {
    if (this.counted.has(id)) return;
    this.counted.set(id, length);
    this.sizes.raw += length;
  }

  /** The answers counted as sent: id and bytes. */
  sent(): [string, number][] {
    return [...this.counted];
  }

  /** Takes in what another store stored (the records', on a worker thread): its files, and its answers as sent. */
  adopt(files: [string, Uint8Array][], sent: [string, number][]): void {
    for (const [file, bytes] of files) this.files.set(file, bytes);
    for (const [id, length] of sent) this.count(id, length);
  }

  /** Stores a file of the dataset (build/answers/dataset.ts) as a file of its own, sent as stored, by its SHA-256. */
  async putFile(bytes: Uint8Array, sha256: string): Promise<FileRef> {
    return this.own(contentId(sha256), bytes);
  }
}

/**
 * `promise`, marked as heard: the build starts stores early and awaits them
 * after sealing the packs, and one failing meanwhile is the build's error
 * there, not an unhandled rejection that ends the process with a stack.
 */
function heardLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

/** Answers laid end to end, each remembered with its place. */
class Pack {
  readonly chunks: Uint8Array[] = [];
  length = 0;

  /** Appends `bytes`; their [start, end) in the pack. */
  add(bytes: Uint8Array): [number, number] {
    this.chunks.push(bytes);
    this.length += bytes.length;
    return [this.length - bytes.length, this.length];
  }
}

const array = (parts: string[]) => `[${parts.join(',')}]`;

/** Appends `value` to the list at `key`, creating it on first use. */
function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  let list = map.get(key);
  if (!list) map.set(key, (list = []));
  list.push(value);
}

/** A fragment of every lookup's answer, grouped the way the stored answers are. */
interface Fragments {
  /** Category answers by full name: the CategoryMatch across years and the CategoryYearMatch at its year. */
  byName: Map<string, { year: string; all: string; atYear: string }[]>;
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
    for (const c of categories) {
      const atYear = JSON.stringify(c);
      const all = JSON.stringify({ year, category: c.category, nominations: c.nominations } satisfies CategoryMatch);
      push(byName, c.category, { year, all, atYear });
      // A PersonMatch and a FilmMatch (src/shared/types.ts), the nomination serialized once: the same text as either whole.
      const category = `"category":${JSON.stringify(c.category)},"nomination":`;
      const yearAnd = `{"year":${JSON.stringify(year)},`;
      for (const nomination of c.nominations) {
        const text = JSON.stringify(nomination);
        const film = `{${category}${text}}`;
        const person = `${yearAnd}${category}${text}}`;
        for (const name of new Set([...nomination.primary, ...(nomination.secondary ?? [])]))
          push(byPerson, name, { year, all: person, atYear: film });
        for (const id of ids.get(nomination) ?? []) push(byId, id, person);
      }
    }
  }
  return { byName, byPerson, byId };
}

/**
 * The whole archive's answer written out from its years' answers, each
 * year's elements (a category each) and where they lie in bytes, and every
 * element as a CategoryMatch (`joined`, CategoryIndex): what a text matching
 * several category names is cut from at run time. The same bytes as
 * JSON.stringify(archive): years in its key order, each `"year":` and the
 * year's answer, the elements each one's JSON.
 */
function wholeArchive(archive: Archive) {
  const joined: string[] = [];
  let joinedEnd = 0; // past the `[`, less the comma before the first element
  const years = Object.entries(archive).map(([year, categories]) => {
    const parts: [string, number, number][] = [];
    let end = 1; // past the `[`
    const open = `{"year":${JSON.stringify(year)},`;
    const at = joinedEnd + 1;
    const texts = categories.map((c, k) => {
      const text = JSON.stringify(c);
      const start = end + (k > 0 ? 1 : 0);
      end = start + Buffer.byteLength(text);
      parts.push([c.category, start, end]);
      const element = open + text.slice(1);
      joined.push(element);
      joinedEnd += 1 + Buffer.byteLength(element);
      return text;
    });
    return { year, text: array(texts), parts, at };
  });
  return {
    text: `{${years.map((y) => `${JSON.stringify(y.year)}:${y.text}`).join(',')}}`,
    joined: array(joined),
    years,
  };
}

/** The category index as stored: its line, then each name's answers at each year, a line each (CategoryIndex). */
const categoryIndexText = (index: CategoryIndex, years: Record<string, FileRef>[]) =>
  [index, ...years].map((line) => JSON.stringify(line)).join('\n');

type Entries = (readonly [string, Promise<FileRef>])[];

/** Entries of refs, once resolved, as an object. */
async function resolved(entries: Entries): Promise<Record<string, FileRef>> {
  const out: Record<string, FileRef> = {};
  for (const [key, ref] of entries) out[key] = await ref;
  return out;
}

/** Stores an answer across all years and one answer per year, from fragments carrying both, in the pack of `group`. */
function storeGrouped(store: Store, units: { year: string; all: string; atYear: string }[], group: string) {
  const byYear = new Map<string, string[]>();
  for (const u of units) push(byYear, u.year, u.atYear);
  return {
    all: store.put(array(units.map((u) => u.all)), { group }),
    years: [...byYear].map(([y, parts]) => [y, store.put(array(parts), { group })] as const),
  };
}

/** What buildArtifacts put that the lookups' indexes name. */
interface Put {
  names: string[];
  named: ReturnType<typeof storeGrouped>[];
  people: ({ name: string } & ReturnType<typeof storeGrouped>)[];
  placeOf: Map<string, number>;
  whole: ReturnType<typeof wholeArchive>;
  joinedRef: Promise<FileRef>;
  idRefs: ReturnType<typeof idAnswers>;
}

/** The lookups' indexes, each a file read and never sent: the category index, the name shards and the id shards. */
async function lookupIndexes(store: Store, put: Put) {
  const { names, named, people, placeOf, whole } = put;
  const shards: Shard[] = Array.from({ length: SHARD_COUNT }, () => ({}));
  for (const p of people) shards[shardOf(p.name)][p.name] = [await p.all, await resolved(p.years)];
  const categoryIndex: CategoryIndex = {
    names,
    all: await Promise.all(named.map((n) => n.all)),
    joined: await put.joinedRef,
    elements: Object.fromEntries(
      whole.years.map((y) => [
        y.year,
        { at: y.at, parts: y.parts.flatMap(([name, start, end]) => [placeOf.get(name)!, start, end]) },
      ]),
    ),
  };
  const namesAtYears = await Promise.all(named.map((n) => resolved(n.years)));
  return {
    // What only category lookups read, in a file of its own.
    categories: await store.put(categoryIndexText(categoryIndex, namesAtYears), { variants: false }),
    shards: await Promise.all(shards.map((s) => store.put(JSON.stringify(s), { variants: false }))),
    ids: await idShards(store, put.idRefs),
  };
}

/**
 * The id index's answers: each IMDb id's, in the pack of its shard (so a cold id lookup reads its shard and one pack).
 */
function idAnswers(store: Store, byId: Fragments['byId']) {
  return [...byId].map(
    ([id, parts]) => [id, store.put(array(parts), { group: `id ${shardOf(id, ID_SHARD_COUNT)}` })] as const,
  );
}

/** The id index's shards, naming each id's answer. A shard is read, never sent. */
async function idShards(store: Store, answers: ReturnType<typeof idAnswers>): Promise<FileRef[]> {
  const shards: IdShard[] = Array.from({ length: ID_SHARD_COUNT }, () => ({}));
  for (const [id, ref] of answers) shards[shardOf(id, ID_SHARD_COUNT)][id] = await ref;
  return Promise.all(shards.map((s) => store.put(JSON.stringify(s), { variants: false })));
}

/** Record index shards share a gzipped pack in runs of this many (a cold record lookup inflates one run). */
const RECORD_SHARDS_A_PACK = 8;

/**
 * The record index's shards, naming each record's answer by its key. Read,
 * never sent; kept in gzipped packs like answers (a
 * shard's refs are half its bytes, and a pack of them takes 40% of the room).
 */
async function recordShards(store: Store, answers: ReturnType<typeof recordAnswers>): Promise<FileRef[]> {
  const shards: IdShard[] = Array.from({ length: RECORD_SHARD_COUNT }, () => ({}));
  for (const [key, ref] of answers) shards[shardOf(key, RECORD_SHARD_COUNT)][key] = await ref;
  const refs = shards.map((s, i) =>
    store.put(JSON.stringify(s), {
      variants: false,
      group: `record index ${Math.floor(i / RECORD_SHARDS_A_PACK)}`,
      anySize: true,
    }),
  );
  await store.seal();
  return Promise.all(refs);
}

/** How answers are stored. */
export interface StoreOptions {
  /** Parallel gzip jobs; default DEFAULT_CONCURRENCY. */
  concurrency?: number;
  /** The folder where packs' gzip is remembered by content (gzip-cache.ts); none: every pack gzipped. */
  gzipCache?: string;
}

/**
 * The records stored by a store of their own (records-worker.ts, on a worker
 * thread): the award list and the rankings table, stored with the other lists
 * by buildArtifacts; the record index's shards; the files of the records' and
 * the index's packs; and the answers counted as sent. The same files as the
 * build's own store would make: a pack is its answers in the order put, which
 * only records share.
 */
export interface StoredRecords {
  awards: string;
  rankings: string;
  shards: FileRef[];
  files: [string, Uint8Array][];
  sent: [string, number][];
}

/** Stores the records (their packs gzipped, on the thread pool) and their index. */
export async function storeRecords(records: Records, options: StoreOptions = {}): Promise<StoredRecords> {
  const store = new Store(pLimit(options.concurrency ?? DEFAULT_CONCURRENCY), options.gzipCache);
  const answers = recordAnswers(store, records);
  await store.seal();
  const shards = await recordShards(store, answers);
  return { awards: records.awards, rankings: records.rankings, shards, files: [...store.files], sent: store.sent() };
}

export interface ArtifactOptions extends StoreOptions {
  ids?: NominationIds;
  facts?: NameFacts;
  /**
   * The records (build/answers/records.ts), stored apart (storeRecords): their
   * files and index taken in, their award list stored with the other lists.
   * Awaited once the search index is made.
   */
  records?: Promise<StoredRecords>;
  /**
   * The dataset's files (build/answers/dataset.ts), stored with their list
   * (`/dataset`): awaited once the answers are queued for compression and the
   * search index is made, whose stored files it is given (the offline client's
   * search reads them from the dataset).
   */
  dataset?: (search: string[]) => Promise<DatasetFile[]>;
  /** The search index's stored files, made elsewhere (on the dataset's worker thread); without them, made here. */
  search?: Promise<string[]>;
}

/**
 * Records are packed by kind in runs of about this many bytes (inflated): a
 * cold record lookup inflates one. Against 512 KiB, a film's, person's or
 * company's (a few KiB each) cost the Worker about 5 ms less cold, for 115
 * more files; an award's (50 to 220 KiB each: Best Picture's is alone in its
 * pack) about 4 ms less, for 15 more.
 */
export const RECORD_PACK_BYTES = 128 * 1024;

/**
 * The records (build/answers/records.ts), each in a pack whatever its size,
 * in runs of RECORD_PACK_BYTES in the order given (records sharing
 * nominations lie together, so their gzipped pack is small), sent as stored
 * (docs/records.md).
 */
function recordAnswers(store: Store, records: Records) {
  let [group, size, kind] = [0, 0, ''];
  return records.records.map(({ key, text, group: of }) => {
    if (size >= RECORD_PACK_BYTES || of !== kind) [group, size, kind] = [group + 1, 0, of];
    size += Buffer.byteLength(text);
    return [key, store.put(text, { group: `record ${group}`, variants: false, sent: true, anySize: true })] as const;
  });
}

/** The dataset's files, each a file of its own, and the list that names them. */
async function storeDataset(
  store: Store,
  files: DatasetFile[],
  source: Manifest['source'],
): Promise<NonNullable<Manifest['dataset']>> {
  const revision = source.revision;
  // Each file hashed once: its SHA-256 is in the list, and its id the start of it.
  const sha256 = files.map((f) => hash('sha256', f.bytes));
  const list: DatasetList = {
    revision: source.sha256,
    ...(revision?.commit ? { commit: revision.commit } : {}),
    ...(revision?.date ? { date: revision.date } : {}),
    licence: LICENCE,
    attribution: ATTRIBUTION,
    files: files.map((f, i) => ({
      name: f.name,
      format: f.format,
      bytes: f.bytes.length,
      sha256: sha256[i],
      revision: source.sha256,
      licence: LICENCE,
    })),
  };
  // The list is put at once, so it is in its pack when the packs are sealed.
  const listRef = store.put(JSON.stringify(list), { group: LISTS });
  const refs: Record<string, FileRef> = {};
  for (const [i, f] of files.entries()) refs[f.name] = await store.putFile(f.bytes, sha256[i]);
  return { list: await listRef, files: refs };
}

export async function buildArtifacts(
  archive: Archive,
  source: Manifest['source'],
  options: ArtifactOptions = {},
): Promise<Artifacts> {
  const { ids = new Map(), facts = noFacts(), concurrency = DEFAULT_CONCURRENCY } = options;
  const store = new Store(pLimit(concurrency), options.gzipCache);
  const years = Object.keys(archive);
  const { byName, byPerson, byId } = fragments(archive, ids);

  // Every answer is put first, in a fixed order, then the packs are sealed: only then do refs into them resolve.
  // The archive and each year are files of their own: one a year, so few, and large.
  const whole = wholeArchive(archive);
  const archiveRef = store.put(whole.text);
  // Read, never sent.
  const joinedRef = store.put(whole.joined, { variants: false });
  const yearRefs = whole.years.map((y) => store.put(y.text));

  const names = [...byName.keys()];
  const named = [...byName.values()].map((units, i) => storeGrouped(store, units, `category ${i % CATEGORY_PACKS}`));
  const placeOf = new Map(names.map((name, i) => [name, i]));

  let nameYearPairs = 0;
  const people = [...byPerson].map(([name, matches]) => {
    const stored = storeGrouped(store, matches, `name ${shardOf(name)}`);
    nameYearPairs += stored.years.length;
    return { name, ...stored };
  });
  const idRefs = idAnswers(store, byId);
  const categoryListRef = store.put(JSON.stringify(categoryList(archive, facts.awards)), { group: LISTS });
  // Every pack but the lists' (the dataset's list is yet to come) is whole: gzipped on the thread pool from
  // here, while this thread makes the search index (on two cores, the rebuild's longest wait).
  const sealed = heardLater(store.seal([LISTS]));
  // The lookups' indexes follow from those packs alone: made once they are, while this thread waits for the search
  // index, the records and the dataset (on a first build, for seconds), rather than after them, with one core idle.
  const indexes = heardLater(
    sealed.then(() => lookupIndexes(store, { names, named, people, placeOf, whole, joinedRef, idRefs })),
  );
  const searchFiles = options.search ? await options.search : storedFiles(searchIndex(archive, facts, ids));
  const searchRefs = heardLater(Promise.all(searchFiles.map((text) => store.put(text, { variants: false }))));
  // The records, made and stored on a worker thread meanwhile; their list is put before the dataset's.
  const records = await options.records;
  if (records) store.adopt(records.files, records.sent);
  const awardListRef = records ? store.put(records.awards, { group: LISTS }) : undefined;
  // Read whole by the rankings made at run time, never sent: a file of its own, which the Worker carries in its code.
  const rankingsRef = records ? store.put(records.rankings, { variants: false }) : undefined;
  const datasetRef = options.dataset
    ? heardLater(storeDataset(store, await options.dataset(searchFiles), source))
    : undefined;
  await sealed;
  await store.seal();
  const { categories, shards, ids: idIndex } = await indexes;
  const manifest: Manifest = {
    format: LAYOUT_FORMAT,
    source,
    yearRange: [Number(years[0]), Number(years[years.length - 1])],
    archive: await archiveRef,
    years: Object.fromEntries(await Promise.all(years.map(async (y, i) => [y, await yearRefs[i]]))),
    categories,
    categoryCount: names.length,
    shards,
    ids: idIndex,
    // Read by searches, never sent: the core first, then the files of rows, in the order the core counts them.
    search: await searchRefs,
    categoryList: await categoryListRef,
    ...(datasetRef ? { dataset: await datasetRef } : {}),
    ...(records && awardListRef ? { records: { awards: await awardListRef, shards: records.shards } } : {}),
    ...(rankingsRef ? { rankings: await rankingsRef } : {}),
  };
  const responses = store.files.size; // before the manifest is added
  store.files.set(MANIFEST_PATH, Buffer.from(JSON.stringify(manifest)));
  return {
    files: store.files,
    manifest,
    sizes: store.sizes,
    stats: { responses, names: byPerson.size, nameYearPairs, categoryNames: byName.size, ids: byId.size },
  };
}
