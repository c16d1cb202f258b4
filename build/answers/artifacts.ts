/**
 * Precomputes every answer a text names (the archive, each year, each full
 * category name, person, film and id) into content-addressed files, and the
 * index a text matching several category names is joined by at run time:
 * large answers as files of their own beside their compressed copies,
 * small ones packed together by the shard that names them (their compressed
 * copies in a pack of their own, which only the Node server reads), so that
 * the output stays a few thousand files (a host may cap their number) and a
 * cold lookup reads few. Pure apart from compression: archive in,
 * { path -> bytes } and the manifest out. Writing them to disk is build.ts's job.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import pLimit from 'p-limit';
import { contentId, dataPath, ID_SHARD_COUNT, MANIFEST_PATH, RECORD_SHARD_COUNT, refPart, SHARD_COUNT, shardOf } from '../../src/store/refs.ts';
import { type Archive, type CategoryIndex, type CategoryMatch, type FileRef, type FilmMatch, type IdShard, LAYOUT_FORMAT, type Manifest, type PersonMatch, type Shard, type DatasetList } from '../../src/shared/types.ts';
import { type NameFacts, type NominationIds, noFacts } from '../archive/import.ts';
import { categoryList, searchIndex } from './search-index.ts';
import { storedFiles } from '../../src/store/search.ts';
import { type Copies, decodeTo, gunzipsTo, NO_COPY } from './compression-cache.ts';
import { ATTRIBUTION, type DatasetFile, LICENCE } from './dataset.ts';
import type { Records } from './records.ts';

/** Packs the small category answers are spread over (by the category's place in the manifest). */
const CATEGORY_PACKS = 16;
/** Parallel compression jobs: zlib runs them on libuv's thread pool. */
export const DEFAULT_CONCURRENCY = 4;
/** Below this many bytes a compressed variant saves too little to be worth a file. */
export const COMPRESS_MIN_BYTES = 1024;
/**
 * Brotli's quality for an answer: 10 from this many bytes, 8 below. On the
 * full archive's 1,306 answers of 1 to 4 KiB, quality 10 took 1.2 s of CPU
 * (a first build's largest single cost after the whole archive's answer) to
 * make their copies 12% smaller than quality 8 did in 0.1 s: 56 bytes an
 * answer, whose copy is about 470 bytes either way, one packet.
 */
export const BROTLI_BEST_FROM = 4096;

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);
export interface Artifacts {
  /** Every file to write under dist/, by path relative to dist/. */
  files: Map<string, Uint8Array>;
  manifest: Manifest;
  stats: { responses: number; names: number; nameYearPairs: number; categoryNames: number; ids: number };
  /** Every compressed copy this build holds, by its answer's id: the next build's to reuse. */
  compressed: Map<string, Copies>;
  /** Total bytes of the distinct answers, raw and as served compressed. */
  sizes: { raw: number; gzip: number; br: number };
  /** Earlier builds' copies not used because they did not decode to their answer (made again). */
  refused: number;
  /** Copies compressed by this build rather than reused. */
  made: number;
}

const idOf = (bytes: Uint8Array) => contentId(createHash('sha256').update(bytes).digest('hex'));

/** Answers up to this many bytes go into their group's pack (with their compressed variants); larger ones are files of their own. */
export const PACK_MAX_BYTES = 16 * 1024;

/** An answer waiting in a pack: its bytes, and its compressed variants once made. */
interface Slot {
  id: string;
  bytes: Uint8Array;
  variants: Promise<Copies | null>;
  resolve: (ref: FileRef) => void;
}

/** How far the compression of answers has got: `done` of `total` answers, as they finish. */
export type Progress = (done: number, total: number) => void;

class Store {
  readonly files = new Map<string, Uint8Array>();
  /** Compression jobs queued and finished, for the build's progress line. */
  private queued = 0;
  private finished = 0;
  progress: Progress | undefined;
  /** Bytes a client downloads for every distinct answer, by encoding (identity where no variant is kept). */
  readonly sizes = { raw: 0, gzip: 0, br: 0 };
  private readonly refs = new Map<string, Promise<FileRef>>();
  /** Answers already in `sizes`: an answer stored in two packs is still one answer. */
  private readonly counted = new Set<string>();
  /** Answers waiting for their pack, by group, in the order they were put (so a build is deterministic). */
  private readonly packs = new Map<string, Slot[]>();
  private readonly limit: ReturnType<typeof pLimit>;

  /** Compressed copies an earlier build made, by answer id; and those this build uses. */
  private readonly reuse: ReadonlyMap<string, Copies>;
  readonly compressed = new Map<string, Copies>();
  /** Compressions queued or done, by answer id. */
  private readonly compressing = new Map<string, Promise<Copies>>();
  /** Earlier copies that did not decode to their answer. */
  refused = 0;
  /** Copies this build compressed rather than reused (0: the compression cache already holds every one). */
  made = 0;

  constructor(limit: ReturnType<typeof pLimit>, reuse: ReadonlyMap<string, Copies>) {
    this.limit = limit;
    this.reuse = reuse;
  }

  /**
   * Stores a response body once (by content), with its compressed variants
   * unless it is never sent as it is (`sent: false`, an index file) or is
   * sent only as it is (`variants: false`, an answer joined across years);
   * resolves to its ref. A small one put with a `group` goes into that
   * group's pack, whose refs resolve once {@link seal} has written the packs;
   * with `anySize`, whatever its size (a record: packs are gzipped on disk).
   */
  put(body: string, { variants = true, sent = variants, group, anySize = false }: { variants?: boolean; sent?: boolean; group?: string; anySize?: boolean } = {}): Promise<FileRef> {
    const bytes = Buffer.from(body, 'utf8');
    const id = idOf(bytes);
    const packed = group !== undefined && (anySize || bytes.length <= PACK_MAX_BYTES);
    // The same bytes sent as stored and with compressed copies are two answers (a join can equal a year's answer).
    const key = `${packed ? group : ''}\u0000${variants}\u0000${id}`;
    let ref = this.refs.get(key);
    if (!ref) {
      const compressed = variants && bytes.length >= COMPRESS_MIN_BYTES ? this.compressLater(id, bytes) : Promise.resolve(null);
      if (sent) this.count(id, bytes, compressed);
      ref = packed ? this.slot(group, { id, bytes, variants: compressed }) : heardLater(this.own(id, bytes, compressed));
      this.refs.set(key, ref);
    }
    return ref;
  }

  /**
   * Writes every pack and resolves the refs into them; call once every answer
   * is put. A group's answers go into one pack and their compressed copies
   * into another, so a runtime that sends answers as stored (the edge, the
   * Worker) reads and checks only bytes it sends.
   */
  async seal(): Promise<void> {
    const groups = [...this.packs.values()];
    this.packs.clear();
    await Promise.all(groups.map((slots) => this.sealGroup(slots)));
  }

  /**
   * One group's two packs. Its answers are all at hand, so their pack is
   * gzipped at once; the pack of copies waits for each copy. Every group at
   * once: awaited one by one, the packs' gzip (about a second of CPU on the
   * full archive) ran on one thread after all else.
   */
  private async sealGroup(slots: Slot[]): Promise<void> {
    const plain = new Pack();
    const placed = slots.map((slot) => plain.add(slot.id, slot.bytes));
    const encoded = new Pack();
    // Awaited together, so a failed gzip is the build's error at once, never a rejection left unheard meanwhile.
    const [plainId, parts] = await Promise.all([
      plain.length > 0 ? this.writeGzipped(plain) : undefined,
      Promise.all(slots.map((slot) => slot.variants)).then((all) => all.map((compressed, i) => [placed[i], ...(compressed ? compressed.map((c) => encoded.add(idOf(c), c)) : [])])),
    ]);
    const ids = new Map<Pack, string>();
    if (plainId) ids.set(plain, plainId);
    if (encoded.length > 0) ids.set(encoded, this.write(Buffer.concat(encoded.chunks)));
    slots.forEach((slot, i) => {
      slot.resolve(parts[i].map(([id, pack, start, end]) => refPart(id, { id: ids.get(pack)!, start, end })).join('/'));
    });
  }

  /** Stores bytes under their id. */
  private write(bytes: Uint8Array): string {
    const id = idOf(bytes);
    this.files.set(dataPath(id)!, bytes);
    return id;
  }

  /**
   * Stores a pack of answers as sent, gzipped (JSON of many small answers
   * shrinks about six times; a reader inflates it once). No client is sent
   * this gzip, so it is made at level 6: level 9 took a first build 0.7 s of
   * CPU for packs 1.4% smaller. It is kept with the answers' copies and
   * reused like them once it decodes to the pack.
   */
  private async writeGzipped(pack: Pack): Promise<string> {
    const bytes = Buffer.concat(pack.chunks);
    const id = idOf(bytes);
    const known = this.compressed.get(id) ?? this.reuse.get(id);
    let gzipped = known && (await gunzipsTo(bytes, known[0])) ? known[0] : undefined;
    if (!gzipped) {
      this.made++;
      gzipped = await this.limit(() => gzip(bytes, { level: 6 }));
    }
    if (!this.compressed.has(id)) this.compressed.set(id, [gzipped, NO_COPY]);
    return this.write(gzipped);
  }

  private slot(group: string, slot: Omit<Slot, 'resolve'>): Promise<FileRef> {
    return new Promise((resolve) => push(this.packs, group, { ...slot, resolve }));
  }

  private async own(id: string, bytes: Uint8Array, compressed: Slot['variants']): Promise<FileRef> {
    this.files.set(dataPath(id)!, bytes);
    const variants = await compressed;
    if (!variants) return id;
    const ids = variants.map((v) => idOf(v));
    variants.forEach((v, i) => this.files.set(dataPath(ids[i])!, v));
    return [id, ...ids].join('/');
  }

  /** Counts an answer's bytes as sent once, whichever packs hold it (an index file, read and never sent, is not one). */
  private count(id: string, bytes: Uint8Array, compressed: Slot['variants']): void {
    if (this.counted.has(id)) return;
    this.counted.add(id);
    this.sizes.raw += bytes.length;
    compressed.then(
      (c) => {
        this.sizes.gzip += c ? c[0].length : bytes.length;
        this.sizes.br += c ? c[1].length : bytes.length;
      },
      () => {}, // a failed compression is the build's error where its ref is awaited
    );
  }

  /** Queues the compression of an answer, counting it for the progress line; the same bytes in two packs (a person's and an id's answer) are compressed once. */
  private compressLater(id: string, bytes: Uint8Array): Promise<Copies> {
    const pending = this.compressing.get(id);
    if (pending) return pending;
    this.queued++;
    const compressing = this.limit(() => this.reusedOr(bytes, this.reuse.get(id), () => this.compress(bytes))).then((done) => {
      this.compressed.set(id, done);
      this.progress?.(++this.finished, this.queued);
      return done;
    });
    this.compressing.set(id, compressing);
    return compressing;
  }

  /**
   * Stores a dataset file (build/answers/dataset.ts) as a file of its own, in
   * one form: its gzip and brotli copies cost 5.9 MB of dist/ on the full
   * archive and served only the Node server (Netlify and Cloudflare compress
   * at their edge, Varnish sends these files as stored so that ranges apply to
   * them), for a download made once.
   */
  async putFile(bytes: Uint8Array): Promise<FileRef> {
    return this.own(idOf(bytes), bytes, Promise.resolve(null));
  }

  /**
   * An earlier build's copies of `bytes` once they decode to it (decoding is
   * a small part of what compressing costs, so a copy is proven before it is
   * used), else `make`'s; a refused copy and a made one are counted.
   */
  private async reusedOr(bytes: Uint8Array, known: Copies | undefined, make: () => Promise<Copies>): Promise<Copies> {
    if (known && (await decodeTo(bytes, known))) return known;
    if (known) this.refused++;
    this.made++;
    return make();
  }

  private compress(bytes: Uint8Array): Promise<[Uint8Array, Uint8Array]> {
    return Promise.all([
      gzip(bytes, { level: 9 }),
      brotli(bytes, {
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: bytes.length >= BROTLI_BEST_FROM ? 10 : 8,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
          [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
        },
      }),
    ]);
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

  add(id: string, bytes: Uint8Array): [string, Pack, number, number] {
    this.chunks.push(bytes);
    this.length += bytes.length;
    return [id, this, this.length - bytes.length, this.length];
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
      for (const nomination of c.nominations) {
        const person = JSON.stringify({ year, category: c.category, nomination } satisfies PersonMatch);
        const film = JSON.stringify({ category: c.category, nomination } satisfies FilmMatch);
        for (const name of new Set([...nomination.primary, ...(nomination.secondary ?? [])])) push(byPerson, name, { year, all: person, atYear: film });
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
  return { text: `{${years.map((y) => `${JSON.stringify(y.year)}:${y.text}`).join(',')}}`, joined: array(joined), years };
}

/** The category index as stored: its line, then each name's answers at each year, a line each (CategoryIndex). */
const categoryIndexText = (index: CategoryIndex, years: Record<string, FileRef>[]) => [index, ...years].map((line) => JSON.stringify(line)).join('\n');

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

/** The id index's answers: each IMDb id's, in the pack of its shard (so a cold id lookup reads its shard and one pack). */
function idAnswers(store: Store, byId: Fragments['byId']) {
  return [...byId].map(([id, parts]) => [id, store.put(array(parts), { group: `id ${shardOf(id, ID_SHARD_COUNT)}` })] as const);
}

/** The id index's shards, naming each id's answer. A shard is read, never sent: no compressed variants. */
async function idShards(store: Store, answers: ReturnType<typeof idAnswers>): Promise<FileRef[]> {
  const shards: IdShard[] = Array.from({ length: ID_SHARD_COUNT }, () => ({}));
  for (const [id, ref] of answers) shards[shardOf(id, ID_SHARD_COUNT)][id] = await ref;
  return Promise.all(shards.map((s) => store.put(JSON.stringify(s), { variants: false })));
}

/** Record index shards share a gzipped pack in runs of this many (a cold record lookup inflates one run). */
const RECORD_SHARDS_A_PACK = 8;

/**
 * The record index's shards, naming each record's answer by its key. Read,
 * never sent: no compressed variants; kept in gzipped packs like answers (a
 * shard's refs are half its bytes, and a pack of them takes 40% of the room).
 */
async function recordShards(store: Store, answers: ReturnType<typeof recordAnswers>): Promise<FileRef[]> {
  const shards: IdShard[] = Array.from({ length: RECORD_SHARD_COUNT }, () => ({}));
  for (const [key, ref] of answers) shards[shardOf(key, RECORD_SHARD_COUNT)][key] = await ref;
  const refs = shards.map((s, i) => store.put(JSON.stringify(s), { variants: false, group: `record index ${Math.floor(i / RECORD_SHARDS_A_PACK)}`, anySize: true }));
  await store.seal();
  return Promise.all(refs);
}

export interface ArtifactOptions {
  ids?: NominationIds;
  facts?: NameFacts;
  /** Parallel compression jobs; default DEFAULT_CONCURRENCY. */
  concurrency?: number;
  progress?: Progress;
  /** Compressed copies of an earlier build, by answer id, used instead of compressing again. */
  compressed?: ReadonlyMap<string, Copies>;
  /** The records (build/answers/records.ts), stored with the award list and the record index. */
  records?: Records;
  /** Makes the dataset's files (build/answers/dataset.ts), stored with their list (`/dataset`): called once the answers are queued for compression, so the two overlap. */
  dataset?: () => DatasetFile[];
}

/**
 * Records are packed in runs of about this many bytes (inflated): a cold
 * record lookup inflates one. A film's, person's or company's (most asked,
 * a few KiB each) in runs of 128 KiB: against 512, a cold lookup on the
 * Worker cost about 5 ms less, for 115 more files and 0.1 MB. A ceremony's
 * or an award's (50 to 220 KiB each) in runs of 512 KiB. A ranking's (build/answers/rankings.ts)
 * in runs of 128 KiB.
 */
export const RECORD_PACK_BYTES = { thing: 128 * 1024, ceremony: 512 * 1024, award: 512 * 1024, ranking: 128 * 1024 } as const;

/**
 * The records (build/answers/records.ts), each in a pack whatever its size,
 * in runs of RECORD_PACK_BYTES in the order given (records sharing
 * nominations lie together, so their gzipped pack is small), sent as stored:
 * their compressed copies would take more room than dist/ has (docs/records.md).
 */
function recordAnswers(store: Store, records: Records) {
  let [group, size, kind] = [0, 0, ''];
  return records.records.map(({ key, text, group: of }) => {
    if (size >= RECORD_PACK_BYTES[of] || of !== kind) [group, size, kind] = [group + 1, 0, of];
    size += Buffer.byteLength(text);
    return [key, store.put(text, { group: `record ${group}`, variants: false, sent: true, anySize: true })] as const;
  });
}

/** The dataset's files, each a file of its own, and the list that names them. */
async function storeDataset(store: Store, files: DatasetFile[], source: Manifest['source']): Promise<NonNullable<Manifest['dataset']>> {
  const revision = source.revision;
  const list: DatasetList = {
    revision: source.sha256,
    ...(revision?.commit ? { commit: revision.commit } : {}),
    ...(revision?.date ? { date: revision.date } : {}),
    licence: LICENCE,
    attribution: ATTRIBUTION,
    files: files.map((f) => ({ name: f.name, format: f.format, bytes: f.bytes.length, sha256: createHash('sha256').update(f.bytes).digest('hex'), revision: source.sha256, licence: LICENCE })),
  };
  const refs: Record<string, FileRef> = {};
  for (const f of files) refs[f.name] = await store.putFile(f.bytes);
  return { list: await store.put(JSON.stringify(list)), files: refs };
}

/**
 * Lets the thread pool start what was queued: the limiter starts a job, and
 * gives a finished job's slot to the next, only while this thread is idle,
 * so a long run of work here left the pool idle (the whole archive's
 * brotli, about a second of CPU, started a second late).
 */
const handOver = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function buildArtifacts(archive: Archive, source: Manifest['source'], options: ArtifactOptions = {}): Promise<Artifacts> {
  const { ids = new Map(), facts = noFacts(), concurrency = DEFAULT_CONCURRENCY, progress, compressed = new Map() } = options;
  const store = new Store(pLimit(concurrency), compressed);
  store.progress = progress;
  const years = Object.keys(archive);
  const { byName, byPerson, byId } = fragments(archive, ids);

  // Every answer is put first, in a fixed order, then the packs are sealed: only then do refs into them resolve.
  // The archive and each year are files of their own: one a year, so few, and large.
  const whole = wholeArchive(archive);
  const archiveRef = store.put(whole.text);
  // Read, never sent: no compressed variants.
  const joinedRef = store.put(whole.joined, { variants: false });
  const yearRefs = whole.years.map((y) => store.put(y.text));
  await handOver();

  const names = [...byName.keys()];
  const named = [...byName.values()].map((units, i) => storeGrouped(store, units, `category ${i % CATEGORY_PACKS}`));
  const placeOf = new Map(names.map((name, i) => [name, i]));
  await handOver();

  let nameYearPairs = 0;
  const people = [...byPerson].map(([name, matches]) => {
    const stored = storeGrouped(store, matches, `name ${shardOf(name)}`);
    nameYearPairs += stored.years.length;
    return { name, ...stored };
  });
  await handOver();
  const idRefs = idAnswers(store, byId);
  await handOver();
  // While the thread pool compresses those, this thread makes what needs none of it.
  const searchRefs = heardLater(Promise.all(storedFiles(searchIndex(archive, facts, ids)).map((text) => store.put(text, { variants: false }))));
  const categoryListRef = store.put(JSON.stringify(categoryList(archive, facts)));
  await handOver();
  const recordRefs = options.records ? recordAnswers(store, options.records) : undefined;
  const awardListRef = options.records ? store.put(options.records.awards) : undefined;
  // Read whole by the rankings made at run time, never sent: a file of its own, which the Worker carries in its code.
  const rankingsRef = options.records ? store.put(options.records.rankings, { variants: false }) : undefined;
  const datasetRef = options.dataset ? heardLater(storeDataset(store, options.dataset(), source)) : undefined;
  await store.seal();

  const shards: Shard[] = Array.from({ length: SHARD_COUNT }, () => ({}));
  for (const p of people) shards[shardOf(p.name)][p.name] = [await p.all, await resolved(p.years)];

  const categoryIndex: CategoryIndex = {
    names,
    all: await Promise.all(named.map((n) => n.all)),
    joined: await joinedRef,
    elements: Object.fromEntries(whole.years.map((y) => [y.year, { at: y.at, parts: y.parts.flatMap(([name, start, end]) => [placeOf.get(name)!, start, end]) }])),
  };
  const namesAtYears = await Promise.all(named.map((n) => resolved(n.years)));
  const manifest: Manifest = {
    format: LAYOUT_FORMAT,
    source,
    yearRange: [Number(years[0]), Number(years[years.length - 1])],
    archive: await archiveRef,
    years: Object.fromEntries(await Promise.all(years.map(async (y, i) => [y, await yearRefs[i]]))),
    // What only category lookups read, in a file of its own: read, never sent, so no compressed variants.
    categories: await store.put(categoryIndexText(categoryIndex, namesAtYears), { variants: false }),
    categoryCount: names.length,
    shards: await Promise.all(shards.map((s) => store.put(JSON.stringify(s), { variants: false }))),
    ids: await idShards(store, idRefs),
    // Read by searches, never sent: the core first, then the files of rows, in the order the core counts them.
    search: await searchRefs,
    categoryList: await categoryListRef,
    ...(datasetRef ? { dataset: await datasetRef } : {}),
    ...(recordRefs && awardListRef ? { records: { awards: await awardListRef, shards: await recordShards(store, recordRefs) } } : {}),
    ...(rankingsRef ? { rankings: await rankingsRef } : {}),
  };
  const responses = store.files.size; // before the manifest is added
  store.files.set(MANIFEST_PATH, Buffer.from(JSON.stringify(manifest)));
  return {
    files: store.files,
    compressed: store.compressed,
    manifest,
    sizes: store.sizes,
    refused: store.refused,
    made: store.made,
    stats: { responses, names: byPerson.size, nameYearPairs, categoryNames: byName.size, ids: byId.size },
  };
}
