/**
 * Finding a lookup's answer among the files the build stored: every lookup
 * is the manifest, at most one index file (a shard of the name index or of
 * the IMDb id index, or the category index), and the stored answer a ref
 * there names. An answer is stored once, in the form it is sent: a file of
 * its own or a range of a pack (stored gzipped and inflated once); every
 * file, a pack as a whole, is checked against its content hash before its
 * bytes are used, except an answer's own file where the platform keeps files
 * by their content and the source streams it (`DataSource.stream`), and an
 * index file the runtime carries in its code, checked when put there and
 * parsed from its text (`DataSource.checkedText`). Two
 * kinds of answer are made at run time, from stored files, and kept in the
 * answer cache: a search's (from the search index) and a join's (a text
 * matching several category names: runs of elements of a year's answer, or
 * of every year's, stored for it). Knows nothing of headers or keys.
 *
 * Three caches, each bounded: parsed index files and the manifest
 * (`jsonBytes`, counted at three times their file size, about what the parsed
 * objects take) with the inflated packs (at their length), answers (`answerBytes`: each entry counted at about the heap
 * it was measured to hold, STORED_ANSWER_BYTES for a stored answer by ref,
 * SEARCH_ENTRY_BYTES plus its body and its key for one made at run time), and, weakly, which of
 * the source's byte arrays were checked (held by the source, not here). Raw
 * file bytes are the DataSource's to keep; an index file is parsed again when
 * the source hands back other bytes.
 */
import { ByteLru } from '../shared/lru.ts';
import { concatBytes, readAtMost } from '../shared/bytes.ts';
import { contentId, dataPath, MANIFEST_PATH, type ParsedRef, parseRef, sha256Hex, shardOf } from './refs.ts';
import {
  type CategoryIndex,
  type FileRef,
  type IdShard,
  LAYOUT_FORMAT,
  type Manifest,
  type RankingAsk,
  type SearchResult,
  type Shard,
} from '../shared/types.ts';
import { andThen, isPromise, type Maybe } from '../shared/maybe.ts';
import { etagMatches } from '../shared/etag.ts';
import { type Answer, type DataSource, type StoredStream } from './answer.ts';
import type { Lookup } from '../shared/routes.ts';
import { Lines, NeedFiles, SearchIndex, searchKey } from '../shared/search.ts';
import { parseRankingTable, RANKING, rankingKey, rankingText } from '../client/client.ts';

/** The archive's files are missing, corrupt or of another layout: section 7's 500. */
export class DataError extends Error {}

/** What a lookup asks of the store beside the lookup: the If-None-Match it came with, and whether a stream will do (not for a `Range`, cut from the bytes). */
export interface Ask {
  ifNoneMatch: string | null;
  stream: boolean;
}

/**
 * What the store answers a lookup, in one call: the manifest it was found
 * under (the shared cache's revision tag is made from it), the answer (null:
 * nothing matches), and its bytes, as a body or a stream, unless the client
 * already holds it (neither: a 304).
 */
export interface Found {
  manifest: Manifest;
  answer: Answer | null;
  body?: Uint8Array;
  stream?: StoredStream;
}

export interface ArchiveOptions {
  /**
   * Bytes of parsed index files and inflated packs kept; default 24 MiB.
   * Every index file of the full archive counts about 16: the 256 name shards
   * 8, the 128 id shards 3, the search index 4, the category index 0.75; the
   * packs 17 inflated; on the Worker, the joins' file it carries 4.6. The
   * least asked are read (or inflated, a fraction of a millisecond) again.
   * With the answers' 16 MiB the reader keeps at most 40 MiB.
   */
  jsonBytes?: number;
  /**
   * Bytes of answers kept, as measured on the heap: stored ones (ids, ETags and paths: STORED_ANSWER_BYTES each) and
   * those made at run time, searches' and joins' (SEARCH_ENTRY_BYTES, their body and their key); default 16 MiB.
   */
  answerBytes?: number;
}

/** An answer as the answer cache counts it; a search's with the manifest it was made under. */
interface Kept {
  size: number;
  answer: Answer;
  of?: Manifest;
}

/**
 * What one entry of the answer cache holds, measured (Node 24, `--expose-gc`,
 * heap and array buffers after a full collection, full archive): a stored
 * answer about 600 bytes (its object, its id, ETag, place and path, the map
 * entry included); a search's about 850 beside its body and its text (the answer
 * object, its id and ETag, the body's typed array, the key, the map entry).
 * Counting a search at its body and text alone let the 16 MiB bound hold
 * about 137 MiB.
 */
export const STORED_ANSWER_BYTES = 768;
export const SEARCH_ENTRY_BYTES = 960;

const idOf = async (bytes: Uint8Array) => contentId(await sha256Hex(bytes));

/**
 * The full category names in one string, NUL between them, so that the names
 * containing a text are found by searching it once rather than each name.
 */
class NameIndex {
  private readonly text: string;
  /** Where each name starts in `text`. */
  private readonly starts: number[] = [];
  /** False should a name ever hold a NUL: then each name is searched on its own. */
  private readonly separable: boolean;
  private readonly names: string[];

  constructor(names: string[]) {
    this.names = names;
    let text = '';
    for (const name of names) {
      this.starts.push(text.length);
      text += `${name}\u0000`;
    }
    this.text = text;
    this.separable = !names.some((name) => name.includes('\u0000'));
  }

  /** The places in the name list of the names containing `text`, in order (case-sensitive, as the spec's rule 3). */
  containing(text: string): number[] {
    // No name holds a NUL, so a text with one matches none, and a match never spans two names.
    if (!this.separable || text.includes('\u0000'))
      return this.names.flatMap((name, i) => (name.includes(text) ? [i] : []));
    const found: number[] = [];
    for (let at = this.text.indexOf(text); at !== -1;) {
      const index = this.nameAt(at);
      found.push(index);
      at = index + 1 < this.starts.length ? this.text.indexOf(text, this.starts[index + 1]) : -1;
    }
    return found;
  }

  /** The name an offset of `text` falls in: the last start at or before it. */
  private nameAt(offset: number): number {
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.starts[mid] <= offset) low = mid;
      else high = mid - 1;
    }
    return low;
  }
}

/** A stored answer as data, worked out once per ref (so a lookup builds no strings): its id, ETag and place. */
function storedAnswer(parsed: ParsedRef): Answer {
  const { file, range } = parsed.at;
  // parseRef let only ids of 20 hex digits through, so each has a path.
  return { id: parsed.id, etag: `"${parsed.id}"`, at: { path: dataPath(file)!, file, range } };
}

/** The same bytes as before: the same text, or a view of the same memory (a range of an inflated pack is a new view each time it is cut). */
const sameBytes = (a: Uint8Array | string, b: Uint8Array | string): boolean =>
  a === b ||
  (typeof a !== 'string' &&
    typeof b !== 'string' &&
    a.buffer === b.buffer &&
    a.byteOffset === b.byteOffset &&
    a.byteLength === b.byteLength);

/** A pack of answers is at most this long inflated (the full archive's largest is 0.24 MiB): a longer one is a damaged build. */
const PACK_LIMIT = 4 * 1024 * 1024;

/** The bytes `gzipped` inflates to, refused past `limit` bytes. */
async function gunzip(gzipped: Uint8Array, limit: number): Promise<Uint8Array> {
  const plain = await readAtMost(
    new Blob([gzipped as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream('gzip')),
    limit,
  );
  if (!plain) throw new DataError(`a pack inflating past ${limit} bytes`);
  return plain;
}

/** Bytes `range` of a verified pack; a range past its end is a damaged build. */
function slice(pack: Uint8Array, [start, end]: [number, number], file: string): Uint8Array {
  if (end > pack.length) throw new DataError(`range ${start}-${end} beyond pack ${file}`);
  return pack.subarray(start, end);
}

/**
 * A parsed category index: the names to search, its first line, and each
 * name's answers at each year, parsed from its own line the first time a
 * lookup asks for them (the lines are three quarters of the file, and a
 * join needs none of them).
 */
class ParsedCategories {
  readonly names: NameIndex;
  readonly index: CategoryIndex;
  private readonly text: string;
  /** Where each name's line starts in `text`, found on the first ask. */
  private starts: number[] | undefined;
  private readonly atYears = new Map<number, Record<string, FileRef>>();

  constructor(text: string) {
    const first = text.indexOf('\n');
    const index = JSON.parse(first === -1 ? text : text.slice(0, first)) as CategoryIndex;
    if (
      !Array.isArray(index?.names) ||
      !Array.isArray(index.all) ||
      typeof index.joined !== 'string' ||
      typeof index.elements !== 'object' ||
      index.elements === null
    ) {
      throw new DataError('unknown category index format');
    }
    [this.index, this.text, this.names] = [index, text, new NameIndex(index.names)];
  }

  /** The answer of the name at `place` at `year`, if the name was used then. */
  atYear(place: number, year: string): FileRef | undefined {
    let years = this.atYears.get(place);
    if (!years) {
      this.starts ??= lineStarts(this.text);
      const start = this.starts[place + 1];
      if (start === undefined) throw new DataError(`no line for category ${place}`);
      const end = this.text.indexOf('\n', start);
      years = JSON.parse(this.text.slice(start, end === -1 ? undefined : end)) as Record<string, FileRef>;
      this.atYears.set(place, years);
    }
    return Object.hasOwn(years, year) ? years[year] : undefined;
  }
}

/** Where each line of `text` starts. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) starts.push(at + 1);
  return starts;
}

const parseCategories = (text: string) => new ParsedCategories(text);
/** A carried file's text as a Blob of its UTF-8 bytes, which the runtime holds outside the JavaScript heap. */
const toBlob = (text: string) => new Blob([text]);

const encoder = new TextEncoder();
const [OPEN, COMMA, CLOSE] = ['[', ',', ']'].map((c) => encoder.encode(c));

/**
 * Where the elements of the names at `places` lie, in archive order (years
 * ascending, each ceremony's categories as listed), as byte ranges [start,
 * end) of the file they are cut from: at `year`, the year's answer; across
 * all years, the index's `joined` file, where each element is opened with
 * its year and so `8 + JSON.stringify(year).length` bytes longer than in its
 * year's answer. Neighbouring elements lie in the file with their comma
 * between them, so each range is a run of them (one, for a text every name
 * holds).
 */
function runsOf(index: CategoryIndex, places: number[], year?: string): number[] {
  const wanted = new Uint8Array(index.names.length);
  for (const place of places) wanted[place] = 1;
  const runs: number[] = [];
  let [start, end] = [-1, -1];
  for (const y of year === undefined ? Object.keys(index.elements) : [year]) {
    const { at, parts } = index.elements[y];
    const longer = year === undefined ? 8 + JSON.stringify(y).length : 0;
    const base = year === undefined ? at - 1 : 0;
    for (let i = 0, k = 0; i + 2 < parts.length; i += 3, k++) {
      if (wanted[parts[i]] !== 1) continue;
      const from = base + parts[i + 1] + k * longer;
      if (from !== end + 1) {
        // Not the neighbour of the run so far (an element left out, or the first): a new run.
        if (start !== -1) runs.push(start, end);
        start = from;
      }
      end = base + parts[i + 2] + (k + 1) * longer;
    }
  }
  if (start !== -1) runs.push(start, end);
  return runs;
}

/** The answer of `runs` of `file`'s elements (runsOf), each checked to open and close an element. */
function joinedBytes(file: Uint8Array, runs: number[]): Uint8Array {
  const pieces: Uint8Array[] = [OPEN];
  for (let i = 0; i < runs.length; i += 2) {
    const [start, end] = [runs[i], runs[i + 1]];
    if (!(end <= file.length && file[start] === 0x7b && file[end - 1] === 0x7d))
      throw new DataError(`elements ${start}-${end} are not in their file`);
    if (i > 0) pieces.push(COMMA);
    pieces.push(file.subarray(start, end));
  }
  pieces.push(CLOSE);
  return concatBytes(pieces);
}

/**
 * The elements of the names at `year` (runsOf), as ranges of the `joined`
 * file, one for each element, past the `{"year":…,` that opens it there:
 * `{` and such a range are the element as in its year's answer.
 */
function yearInJoined(index: CategoryIndex, places: number[], year: string): number[] {
  const wanted = new Set(places);
  const { at, parts } = index.elements[year];
  const longer = 8 + JSON.stringify(year).length;
  const ranges: number[] = [];
  for (let i = 0, k = 0; i + 2 < parts.length; i += 3, k++)
    if (wanted.has(parts[i]))
      ranges.push(at + parts[i + 1] + k * longer + longer, at - 1 + parts[i + 2] + (k + 1) * longer);
  return ranges;
}

/**
 * The same answers from the `joined` file as a Blob (the Worker carries
 * it in its code): across all years its `runs` (runsOf), at a year its
 * ranges (yearInJoined), each opened with `open`, `{`. Blob slices, so no byte
 * enters the JavaScript heap. The Blob made of them holds a copy of their
 * bytes alone, as the answer cache counts it (in workerd a slice kept as it
 * is holds the whole file: 1.5 MB for any join).
 */
function joinedBlob(file: Blob, runs: number[], open: '' | '{' = ''): Blob {
  const pieces: (Blob | string)[] = ['['];
  for (let i = 0; i < runs.length; i += 2) {
    pieces.push(i > 0 ? `,${open}` : open, file.slice(runs[i], runs[i + 1]));
  }
  pieces.push(']');
  return new Blob(pieces);
}

/** The manifest, if it is one of this layout (what cli/worker-bundle.ts carries is held to it too). */
export function parseManifest(text: string): Manifest {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(text);
  } catch {
    throw new DataError('corrupt manifest');
  }
  if (
    manifest?.format !== LAYOUT_FORMAT ||
    typeof manifest.categories !== 'string' ||
    !Array.isArray(manifest.shards) ||
    !Array.isArray(manifest.ids) ||
    !Array.isArray(manifest.search) ||
    typeof manifest.categoryList !== 'string' ||
    (manifest.records !== undefined &&
      (typeof manifest.records?.awards !== 'string' || !Array.isArray(manifest.records.shards))) ||
    (manifest.rankings !== undefined && typeof manifest.rankings !== 'string')
  ) {
    throw new DataError('unknown manifest format');
  }
  return manifest;
}

export class ArchiveReader {
  /**
   * Which of the source's byte arrays are checked against their id (true), or
   * being checked now: requests arriving meanwhile wait for the same hash. The
   * one promise shared between requests, and no I/O: a hash of bytes in memory
   * (workerd computes it at once, so no other request ever sees it pending;
   * file reads are each request's own, see adapters/_fetch.ts).
   */
  private readonly checks = new WeakMap<Uint8Array, true | Promise<Uint8Array>>();
  /** Parsed index files by file id, the manifest and inflated packs: kept with the bytes they were made from. */
  private readonly parsed: ByteLru<{ size: number; bytes: Uint8Array | string; parsed: unknown }>;
  /**
   * Stored answers by ref (data from the manifest and index files,
   * never a client's text), and searches' by index and text.
   */
  private readonly answers: ByteLru<Kept>;

  constructor(options: ArchiveOptions = {}) {
    this.parsed = new ByteLru(options.jsonBytes ?? 24 * 1024 * 1024);
    this.answers = new ByteLru(options.answerBytes ?? 16 * 1024 * 1024);
  }

  /** Bytes the answer cache counts now. */
  get answerBytes(): number {
    return this.answers.bytes;
  }

  /** Bytes the cache of parsed files counts now. */
  get parsedBytes(): number {
    return this.parsed.bytes;
  }

  /** A lookup's answer and, unless the client holds it, its bytes: the one call a lookup makes (see Found). */
  answer(source: DataSource, lookup: Lookup, ask: Ask): Maybe<Found> {
    const manifest = this.manifest(source);
    return isPromise(manifest)
      ? manifest.then((m) => this.answerIn(source, m, lookup, ask))
      : this.answerIn(source, manifest, lookup, ask);
  }

  private answerIn(source: DataSource, manifest: Manifest, lookup: Lookup, ask: Ask): Maybe<Found> {
    const answer = this.findIn(source, manifest, lookup);
    return isPromise(answer)
      ? answer.then((a) => this.withBytes(source, manifest, a, ask))
      : this.withBytes(source, manifest, answer, ask);
  }

  /** The answer with its bytes, read once, unless the client holds it. */
  private withBytes(source: DataSource, manifest: Manifest, answer: Answer | null, ask: Ask): Maybe<Found> {
    if (!answer || etagMatches(ask.ifNoneMatch, answer.id)) return { manifest, answer };
    const stream = ask.stream ? this.stream(answer, source) : null;
    if (stream) return stream.then((s) => ({ manifest, answer, stream: s }));
    const body = this.read(answer, source);
    return isPromise(body) ? body.then((b) => ({ manifest, answer, body: b })) : { manifest, answer, body };
  }

  /** The answer to a lookup, or null when nothing matches. (Each step branches on a value at hand, so a warm lookup makes no closure.) */
  find(source: DataSource, lookup: Lookup): Maybe<Answer | null> {
    const manifest = this.manifest(source);
    return isPromise(manifest)
      ? manifest.then((m) => this.findIn(source, m, lookup))
      : this.findIn(source, manifest, lookup);
  }

  private findIn(source: DataSource, manifest: Manifest, lookup: Lookup): Maybe<Answer | null> {
    const { name = '', year } = lookup;
    switch (lookup.route) {
      case 'allCeremonies':
        return this.stored(manifest.archive);
      case 'ceremonyByYear':
        return Object.hasOwn(manifest.years, year!) ? this.stored(manifest.years[year!]) : null;
      case 'personByName':
      case 'filmByNameAndYear': {
        const shard = this.shard<Shard>(source, manifest.shards, name);
        return isPromise(shard) ? shard.then((s) => this.inShard(s, name, year)) : this.inShard(shard, name, year);
      }
      case 'titleById':
      case 'nameById': {
        const id = lookup.id!;
        const shard = this.shard<IdShard>(source, manifest.ids, id);
        return isPromise(shard) ? shard.then((s) => this.inIdShard(s, id)) : this.inIdShard(shard, id);
      }
      case 'categoryByName':
      case 'categoryByNameAndYear':
        return this.award(source, manifest, name!, year);
      case 'categories':
        return this.stored(manifest.categoryList);
      case 'search':
        return this.search(source, manifest, name);
      case 'filmRecord':
      case 'peopleRecord':
      case 'ceremonyRecord':
      case 'awardRecord': {
        if (!manifest.records) return null;
        const key =
          lookup.route === 'ceremonyRecord'
            ? `ceremony ${year}`
            : lookup.route === 'awardRecord'
              ? `award ${lookup.id}`
              : lookup.id!;
        const shard = this.shard<IdShard>(source, manifest.records.shards, key);
        return isPromise(shard) ? shard.then((s) => this.inIdShard(s, key)) : this.inIdShard(shard, key);
      }
      case 'awardList':
        return manifest.records ? this.stored(manifest.records.awards) : null;
      case 'datasetList':
        return manifest.dataset ? this.stored(manifest.dataset.list) : null;
      case 'datasetFile': {
        const files = manifest.dataset?.files;
        return files && Object.hasOwn(files, lookup.file!) ? this.stored(files[lookup.file!]) : null;
      }
      case 'rankings':
        return this.ranking(source, manifest, lookup.ranking!);
    }
  }

  /** The ref of a record's answer by its key (an IMDb id, `ceremony {year}`, `award {id}`, `ranking {key}`), or undefined. */
  private recordRef(source: DataSource, manifest: Manifest, key: string): Maybe<FileRef | undefined> {
    if (!manifest.records) return undefined;
    const at = (shard: IdShard) => (Object.hasOwn(shard, key) ? shard[key] : undefined);
    const shard = this.shard<IdShard>(source, manifest.records.shards, key);
    return isPromise(shard) ? shard.then(at) : at(shard);
  }

  /**
   * A ranking (docs/rankings.md): stored by the build when it is one over all
   * years with the default limit (the record `ranking {key}`), else made from
   * the rankings' table (the manifest's `rankings`, which the Worker carries
   * in its code) and kept like a join, by its key. Its `from` names the
   * table and the key.
   */
  private ranking(source: DataSource, manifest: Manifest, ask: RankingAsk): Maybe<Answer | null> {
    const key = rankingKey(ask);
    const storable =
      ask.from === undefined && ask.to === undefined && ask.won === undefined && ask.limit === RANKING.limit;
    return andThen(storable ? this.recordRef(source, manifest, `ranking ${key}`) : undefined, (ref) =>
      ref !== undefined
        ? this.stored(ref)
        : this.made(manifest, `ranking\u0000${key}`, () => {
            const table = manifest.rankings;
            if (table === undefined) return null; // a build from before rankings
            return andThen(this.indexFile(source, table, parseRankingTable), (t) => {
              const text = rankingText(t, ask);
              return text === null ? null : { body: encoder.encode(text), from: `ranking ${table} ${key}` };
            });
          }),
    );
  }

  /**
   * An answer made at run time (a search's, a join's), kept with the stored
   * answers, counted at its size and its key's, so a repeated one costs what
   * a stored answer does; made again under another manifest. Its id (and
   * ETag) is the hash of `from`, which names what it was made from: the same
   * files and the same ask always make the same bytes, and hashing a name
   * costs nothing beside hashing a join of a megabyte.
   */
  private made(
    manifest: Manifest,
    cacheKey: string,
    make: () => Maybe<(({ body: Uint8Array } | { blob: Blob }) & { from: string }) | null>,
  ): Maybe<Answer | null> {
    const hit = this.answers.get(cacheKey);
    if (hit?.of === manifest) return hit.answer;
    return andThen(make(), async (made) => {
      if (!made) return null;
      const id = await idOf(encoder.encode(made.from));
      const [bytes, size] =
        'body' in made ? [{ body: made.body }, made.body.length] : [{ blob: made.blob }, made.blob.size];
      const answer: Answer = { id, etag: `"${id}"`, ...bytes };
      this.answers.set(cacheKey, { answer, size: SEARCH_ENTRY_BYTES + size + cacheKey.length * 2, of: manifest });
      return answer;
    });
  }

  /** A search's answer, made from the index (a scan of a few milliseconds). Its `from` names the index and the text. */
  private search(source: DataSource, manifest: Manifest, text: string): Maybe<Answer | null> {
    return this.made(manifest, `search\u0000${text}`, () => {
      const key = searchKey(text);
      const ref = key === '' ? '' : manifest.search[0]; // no letter or digit: nothing is close
      if (ref === undefined) throw new DataError('no search index');
      const index = ref === '' ? null : this.indexFile(source, ref, SearchIndex.parse);
      return andThen(index, async (found) => ({
        body: encoder.encode(JSON.stringify(found ? await this.searched(source, manifest, found, text, key) : [])),
        from: `search ${ref} ${text}`,
      }));
    });
  }

  /**
   * A search over the index's core, reading the files of rows it asks for
   * (each checked against its id and kept parsed like any index file) and
   * asking again, until it answers: one round of a few files, rarely two.
   */
  private async searched(
    source: DataSource,
    manifest: Manifest,
    index: SearchIndex,
    text: string,
    key: string,
  ): Promise<SearchResult[]> {
    if (manifest.search.length !== index.files)
      throw new DataError('a search index whose files disagree with the manifest');
    const files = new Map<number, Lines>();
    for (;;) {
      const found = index.find(text, key, files);
      if (!(found instanceof NeedFiles)) return found;
      const read = await Promise.all(found.files.map((n) => this.indexFile(source, manifest.search[n], Lines.parse)));
      found.files.forEach((n, i) => files.set(n, read[i]));
    }
  }

  /** A name's answer across all years, or at one year, from its shard. */
  private inShard(shard: Shard, name: string, year: string | undefined): Answer | null {
    const entry = Object.hasOwn(shard, name) ? shard[name] : undefined;
    const ref = year === undefined ? entry?.[0] : entry && Object.hasOwn(entry[1], year) ? entry[1][year] : undefined;
    return ref ? this.stored(ref) : null;
  }

  /** An id's (or a record's key's) answer from its shard. */
  private inIdShard(shard: IdShard, id: string): Answer | null {
    return Object.hasOwn(shard, id) ? this.stored(shard[id]) : null;
  }

  /** The manifest, parsed again only when the source hands back other bytes. */
  manifest(source: DataSource): Maybe<Manifest> {
    const text = source.checkedText?.(MANIFEST_PATH);
    if (text !== undefined) return this.parsedIndex(MANIFEST_PATH, text, parseManifest);
    const bytes = source.read(MANIFEST_PATH);
    return isPromise(bytes) ? bytes.then((b) => this.parsedManifestOf(b)) : this.parsedManifestOf(bytes);
  }

  private parsedManifestOf(bytes: Uint8Array | null): Manifest {
    if (!bytes) throw new DataError('missing manifest');
    return this.parsedIndex(MANIFEST_PATH, bytes, parseManifest);
  }

  /** The bytes at `path` (the file of `id`), once they are known to be what their id (a hash of them) says. */
  verifiedRead(source: DataSource, path: string, id: string): Maybe<Uint8Array> {
    const bytes = source.read(path);
    return isPromise(bytes) ? bytes.then((b) => this.verifiedBytes(b, id, path)) : this.verifiedBytes(bytes, id, path);
  }

  private verifiedBytes(bytes: Uint8Array | null, id: string, path: string): Maybe<Uint8Array> {
    if (!bytes) throw new DataError(`missing ${path}`);
    const check = this.checks.get(bytes);
    if (check === true) return bytes;
    if (check) return check;
    const checking = idOf(bytes).then(
      (actual) => {
        if (actual !== id) {
          this.checks.delete(bytes);
          throw new DataError(`corrupt ${path}`);
        }
        this.checks.set(bytes, true);
        return bytes;
      },
      (error: unknown) => {
        this.checks.delete(bytes);
        throw error;
      },
    );
    this.checks.set(bytes, checking);
    return checking;
  }

  /**
   * A pack of answers, checked against its id and inflated once:
   * kept with the parsed files, counted at its inflated length, and inflated
   * again only when the source hands back other bytes.
   */
  inflatedPack(source: DataSource, path: string, id: string): Maybe<Uint8Array> {
    return andThen(this.verifiedRead(source, path, id), (gzipped) => {
      const hit = this.parsed.peek(id);
      if (hit?.bytes === gzipped) return hit.parsed as Uint8Array;
      return gunzip(gzipped, PACK_LIMIT).then(
        (plain) => {
          this.parsed.set(id, { size: plain.length, bytes: gzipped, parsed: plain });
          return plain;
        },
        (error: unknown) => {
          throw error instanceof DataError ? error : new DataError(`corrupt pack ${path}`);
        },
      );
    });
  }

  /** The answer a ref names, made once per ref. */
  private stored(ref: FileRef): Answer {
    const hit = this.answers.peek(ref);
    if (hit) return hit.answer;
    const parsed = parseRef(ref);
    if (!parsed) throw new DataError(`bad ref ${ref}`);
    const answer = storedAnswer(parsed);
    this.answers.set(ref, { answer, size: STORED_ANSWER_BYTES });
    return answer;
  }

  /**
   * The bytes of an answer: its own body when made at run time, else its
   * stored file, or its range of a pack, once the file is checked against its id.
   */
  read(answer: Answer, source: DataSource): Maybe<Uint8Array> {
    if (answer.body) return answer.body;
    if (answer.blob) return answer.blob.arrayBuffer().then((b) => new Uint8Array(b));
    const at = answer.at!;
    if (!at.range) return this.verifiedRead(source, at.path, at.file);
    const pack = this.inflatedPack(source, at.path, at.file);
    return isPromise(pack) ? pack.then((b) => slice(b, at.range!, at.file)) : slice(pack, at.range, at.file);
  }

  /** The stored bytes as a stream, when `source` streams and they are a file of their own; else null (use `read`). */
  stream(answer: Answer, source: DataSource): Promise<StoredStream> | null {
    if (answer.blob) return Promise.resolve({ body: answer.blob.stream(), length: answer.blob.size });
    const at = answer.at;
    if (!source.stream || !at || at.range) return null;
    return source.stream(at.path).then((s) => {
      if (!s) throw new DataError(`missing ${at.path}`);
      return s;
    });
  }

  /**
   * Parses what whole lookups read, where `source` holds it as text
   * (`checkedText`; nothing is read otherwise): the manifest, the category
   * index and the file every join is cut from (as a Blob), the search
   * index's core, readied (`SearchIndex.ready`), and the rankings' table.
   * The Worker runs this as its isolate starts, which Cloudflare limits
   * apart from a request's CPU (a second): a fresh isolate's first search or
   * join then costs what a later one does. A file it cannot read or parse is
   * left to the first request that needs it.
   */
  prepare(source: DataSource): void {
    const text = (path: string) => source.checkedText?.(path);
    if (text(MANIFEST_PATH) === undefined) return;
    // Each file's text is at hand, so nothing below waits: no promise is made.
    const parsed = <T>(ref: FileRef | undefined, parse: (text: string) => T): T | null => {
      const at = ref === undefined ? undefined : this.stored(ref).at;
      return at && !at.range && text(at.path) !== undefined ? (this.indexFile(source, ref!, parse) as T) : null;
    };
    try {
      const manifest = this.manifest(source) as Manifest;
      const categories = parsed(manifest.categories, parseCategories);
      if (categories) parsed(categories.index.joined, toBlob);
      parsed(manifest.rankings, parseRankingTable);
      parsed(manifest.search[0], SearchIndex.parse)?.ready();
    } catch {
      // A damaged file: the first request that reads it answers as it would have.
    }
  }

  /**
   * A stored file of its own the runtime carries in its code
   * (`DataSource.checkedText`), as a Blob: made once, kept like a parsed
   * index file. Null for any other file (read it).
   */
  private carriedBlob(source: DataSource, ref: FileRef): Blob | null {
    const at = this.stored(ref).at!;
    if (at.range || source.checkedText?.(at.path) === undefined) return null;
    return this.indexFile(source, ref, toBlob) as Blob;
  }

  /** The shard among `shards` (the name index's or the id index's) that holds `key`. */
  private shard<T extends Shard | IdShard>(source: DataSource, shards: FileRef[], key: string): Maybe<T> {
    const ref = shards[shardOf(key, shards.length)];
    if (!ref) throw new DataError('no shard for this name');
    return this.indexFile<T>(source, ref);
  }

  /**
   * A stored JSON file the lookups read (a shard, the category index or answers at a year, the search index), parsed.
   */
  private indexFile<T>(source: DataSource, ref: FileRef, parse: (text: string) => T = JSON.parse): Maybe<T> {
    const file = this.stored(ref);
    const at = file.at!;
    // Carried by the runtime: a file of its own by its path, a range of a pack by the path of its own id.
    const text = source.checkedText?.(at.range ? dataPath(file.id)! : at.path);
    if (text !== undefined) return this.parsedIndex<T>(file.id, text, parse);
    const bytes = this.read(file, source);
    return isPromise(bytes)
      ? bytes.then((b) => this.parsedIndex<T>(file.id, b, parse))
      : this.parsedIndex<T>(file.id, bytes, parse);
  }

  /**
   * An index file's (or the manifest's) parsed content, parsed again only when the source
   * hands back other bytes (a file damaged or replaced on disk), or other checked text.
   */
  private parsedIndex<T>(id: string, bytes: Uint8Array | string, parse: (text: string) => T): T {
    const hit = this.parsed.peek(id);
    if (hit && sameBytes(hit.bytes, bytes)) return hit.parsed as T;
    let parsed: T;
    try {
      parsed = parse(typeof bytes === 'string' ? bytes : new TextDecoder().decode(bytes));
    } catch (error) {
      throw error instanceof DataError ? error : new DataError(`unparsable ${id}`);
    }
    this.parsed.set(id, { size: bytes.length * 3, bytes, parsed });
    return parsed;
  }

  /**
   * Categories whose full name contains `text`. A text matching one name
   * (at a year: one of the names used then) has that name's stored answer;
   * one matching several, their elements joined (`joined`). At a year none
   * of whose names was used, there is no match.
   */
  /**
   * A category lookup's answer, kept under its text and year as well: a text
   * asked again skips matching it against every name, which a join (a
   * text many names contain) spent a third of its CPU on.
   */
  private award(source: DataSource, manifest: Manifest, text: string, year: string | undefined): Maybe<Answer | null> {
    const key = `award\u0000${year ?? ''}\u0000${text}`;
    const hit = this.answers.get(key);
    if (hit?.of === manifest) return hit.answer;
    const index = this.indexFile(source, manifest.categories, parseCategories);
    return andThen(
      andThen(index, (categories) => this.category(source, manifest, categories, text, year)),
      (answer) => {
        // Counted as a made answer whole, though its body may be another entry's too: the bound holds either way.
        const size = SEARCH_ENTRY_BYTES + (answer?.body?.length ?? 0) + key.length * 2;
        if (answer) this.answers.set(key, { answer, size, of: manifest });
        return answer;
      },
    );
  }

  private category(
    source: DataSource,
    manifest: Manifest,
    categories: ParsedCategories,
    text: string,
    year: string | undefined,
  ): Maybe<Answer | null> {
    const { names, index } = categories;
    const matches = names.containing(text);
    if (matches.length === 0) return null;
    if (year === undefined)
      return matches.length === 1 ? this.stored(index.all[matches[0]]) : this.joined(source, manifest, index, matches);
    if (!Object.hasOwn(index.elements, year)) return null;
    const wanted = new Set(matches);
    const { parts } = index.elements[year];
    const used = new Set<number>();
    for (let i = 0; i < parts.length; i += 3) if (wanted.has(parts[i])) used.add(parts[i]);
    if (used.size === 0) return null;
    if (used.size > 1) return this.joined(source, manifest, index, [...used], year);
    const [place] = used;
    const ref = categories.atYear(place, year);
    if (typeof ref !== 'string') throw new DataError(`no answer for category ${place} at ${year}`);
    return this.stored(ref);
  }

  /**
   * The answer of several names, across all years (from the index's
   * `joined` file) or at a year (from that year's answer), made at run time and kept by
   * the set of names, not the text, so every text matching the same names
   * shares one entry.
   */
  private joined(
    source: DataSource,
    manifest: Manifest,
    index: CategoryIndex,
    places: number[],
    year?: string,
  ): Maybe<Answer | null> {
    const key = `join\u0000${year ?? ''}\u0000${places.sort((a, b) => a - b).join(',')}`;
    return this.made(manifest, key, () => {
      const ref =
        year === undefined ? index.joined : Object.hasOwn(manifest.years, year) ? manifest.years[year] : undefined;
      if (ref === undefined) throw new DataError(`no answer for ${year}, whose categories the index lists`);
      const file = this.stored(ref);
      const from = `join ${manifest.categories} ${file.id} ${key}`;
      // Every element, a megabyte and a half, which the Worker carries: cut as a Blob, nothing fetched.
      const carried = this.carriedBlob(source, index.joined);
      if (carried)
        return {
          blob:
            year === undefined
              ? joinedBlob(carried, runsOf(index, places))
              : joinedBlob(carried, yearInJoined(index, places, year), '{'),
          from,
        };
      const runs = runsOf(index, places, year);
      return andThen(this.read(file, source), (bytes) => ({ body: joinedBytes(bytes, runs), from }));
    });
  }
}
