/**
 * Finding a lookup's answer among the files the build stored: the manifest,
 * a shard of the name index or of the IMDb id index, the category index (the
 * full category names, and the answers across all years the build joined for
 * texts matching several), each name's answers at one year, or (for a text
 * matching several names at one year) slices of the year's answer joined in
 * order, as the join index says. An answer is a file of its
 * own or a range of a pack; every file, a pack as a whole, is checked against
 * its content hash before its bytes are used, except an answer's own file
 * where the platform keeps files by their content and the source streams it
 * (`DataSource.stream`). Knows nothing of headers or keys.
 *
 * Caches hold data only, each bounded by bytes: parsed index files
 * (`jsonBytes`, counted at three times their file size, about what the parsed
 * objects take), answers made at run time, joined at one year or searched
 * (`joinBytes`, counted at their size plus their query) and stored answers by
 * ref (`answerBytes`, 768 bytes each).
 * Raw file bytes are the DataSource's to keep; an index file is parsed again
 * when the source hands back other bytes, and joins go when the manifest changes.
 */
import { ByteLru } from '../shared/lru.ts';
import { categorySetKey, dataPath, type Encoding, MANIFEST_PATH, type ParsedRef, parseRef, type Place, sha256Hex, shardOf } from './refs.ts';
import type { CategoryIndex, CategoryYears, FileRef, IdShard, JoinIndex, Manifest, ManifestCategory, Shard } from '../shared/types.ts';
import { andThen, isPromise, type Maybe } from '../shared/maybe.ts';
import { type Answer, type DataSource, type StoredStream } from './answer.ts';
import { concatBytes } from '../shared/bytes.ts';
import type { Lookup } from '../shared/routes.ts';
import { routingWord, SearchIndex, searchKey, searchShard } from './search.ts';

/** The archive's files are missing, corrupt or of another layout: section 7's 500. */
export class DataError extends Error {}

export interface ArchiveOptions {
  /** Bytes of parsed index files kept; default 16 MiB (all 256 name shards of the full archive count about 8, the 128 id shards 3, the category index, the category years and the join index 1). */
  jsonBytes?: number;
  /** Bytes of answers joined at one year kept; default 16 MiB (the widest, a whole ceremony, is at most about 30 KB). */
  joinBytes?: number;
  /** Bytes of stored answers kept (ids, ETags and paths, counted at 768 bytes each); default 8 MiB. */
  answerBytes?: number;
}

interface Joined {
  size: number;
  answer: Answer;
}

const COMPRESSED = ['gzip', 'br'] as const;

/** The punctuation of a joined answer, shared by every join. */
const OPEN = new Uint8Array([0x5b]);
const COMMA = new Uint8Array([0x2c]);
const CLOSE = new Uint8Array([0x5d]);

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const idOf = async (bytes: Uint8Array) => (await sha256Hex(bytes)).slice(0, 20);

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
  private readonly categories: ManifestCategory[];

  constructor(categories: ManifestCategory[]) {
    this.categories = categories;
    let text = '';
    for (const c of categories) {
      this.starts.push(text.length);
      text += `${c.name}\u0000`;
    }
    this.text = text;
    this.separable = !categories.some((c) => c.name.includes('\u0000'));
  }

  /** The places in the category index of the names containing `text`, in order (case-sensitive, as the spec's rule 3). */
  containing(text: string): number[] {
    // No name holds a NUL, so a text with one matches none, and a match never spans two names.
    if (!this.separable || text.includes('\u0000')) return this.categories.flatMap((c, i) => (c.name.includes(text) ? [i] : []));
    const found: number[] = [];
    for (let at = this.text.indexOf(text); at !== -1; ) {
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

/** A stored answer: each stored encoding's id, ETag and place (its own file, or a range of a pack), worked out once per ref, so a lookup builds no strings. */
class StoredAnswer implements Answer {
  readonly ids: Answer['ids'];
  readonly etags: Answer['etags'];
  private readonly places: { identity: Place } & Partial<Record<'gzip' | 'br', Place>>;
  private readonly paths: { identity: string } & Partial<Record<'gzip' | 'br', string>>;
  private readonly reader: ArchiveReader;

  constructor(parsed: ParsedRef, reader: ArchiveReader) {
    this.reader = reader;
    // parseRef let only ids of 20 hex digits through, so each has a path.
    this.ids = { identity: parsed.id };
    this.etags = { identity: `"${parsed.id}"` };
    this.places = { identity: parsed.at.identity };
    this.paths = { identity: dataPath(parsed.at.identity.file)! };
    for (const encoding of COMPRESSED) {
      const id = parsed[encoding];
      const place = parsed.at[encoding];
      if (!id || !place) continue;
      this.ids[encoding] = id;
      this.etags[encoding] = `"${id}"`;
      this.places[encoding] = place;
      this.paths[encoding] = dataPath(place.file)!;
    }
  }

  /** What the answer cache counts it at: the object, its ids, ETags, places and paths. */
  readonly size = 768;

  bytes(encoding: Encoding, source: DataSource): Maybe<Uint8Array> {
    const stored = this.paths[encoding] ? encoding : 'identity';
    const { file, range } = this.places[stored]!;
    const bytes = this.reader.verifiedRead(source, this.paths[stored]!, file);
    if (!range) return bytes;
    return isPromise(bytes) ? bytes.then((b) => slice(b, range, file)) : slice(bytes, range, file);
  }

  stream(encoding: Encoding, source: DataSource): Promise<StoredStream> | null {
    const stored = this.paths[encoding] ? encoding : 'identity';
    if (!source.stream || this.places[stored]!.range) return null;
    const path = this.paths[stored]!;
    return source.stream(path).then((s) => {
      if (!s) throw new DataError(`missing ${path}`);
      return s;
    });
  }
}

/** Bytes `range` of a verified pack; a range past its end is a damaged build. */
function slice(pack: Uint8Array, [start, end]: [number, number], file: string): Uint8Array {
  if (end > pack.length) throw new DataError(`range ${start}-${end} beyond pack ${file}`);
  return pack.subarray(start, end);
}

export class ArchiveReader {
  private readonly verified = new WeakSet<Uint8Array>();
  /** Bytes being hashed now: requests arriving meanwhile wait for the same hash rather than start another. */
  private readonly verifying = new WeakMap<Uint8Array, Promise<Uint8Array>>();
  private parsedManifest: { bytes: Uint8Array; manifest: Manifest } | null = null;
  /** The full category names of the category index parsed last, for finding those containing a text. */
  private names: { list: ManifestCategory[]; index: NameIndex } | null = null;
  /** Parsed index files (name and id shards, the category index and years, the join index), by file id. */
  private readonly indexes: ByteLru<{ size: number; bytes: Uint8Array; parsed: unknown }>;
  private readonly joins: ByteLru<Joined>;
  /** Stored answers by ref: data from the manifest and shards, never a client's text. */
  private readonly answers: ByteLru<StoredAnswer>;

  constructor(options: ArchiveOptions = {}) {
    this.indexes = new ByteLru(options.jsonBytes ?? 16 * 1024 * 1024);
    this.joins = new ByteLru(options.joinBytes ?? 16 * 1024 * 1024);
    this.answers = new ByteLru(options.answerBytes ?? 8 * 1024 * 1024);
  }

  /** Bytes the join cache holds now. */
  get joinedBytes(): number {
    return this.joins.bytes;
  }

  /** Bytes the stored-answer cache counts now. */
  get storedBytes(): number {
    return this.answers.bytes;
  }

  /** The answer to a lookup, or null when nothing matches. (Each step branches on a value at hand, so a warm lookup makes no closure.) */
  find(source: DataSource, lookup: Lookup): Maybe<Answer | null> {
    const manifest = this.manifest(source);
    return isPromise(manifest) ? manifest.then((m) => this.findIn(source, m, lookup)) : this.findIn(source, manifest, lookup);
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
        return this.category(source, manifest, name, year);
      case 'categories':
        return this.stored(manifest.categoryList);
      case 'search': {
        const hit = this.joins.get(`search\u0000${name}`);
        if (hit) return hit.answer;
        const key = searchKey(name);
        if (key === '') return this.searched('', null, name); // no letter or digit: nothing is close
        const ref = manifest.search[searchShard(routingWord(key))];
        if (!ref) throw new DataError('no search shard for this text');
        return andThen(this.indexFile(source, ref, SearchIndex.parse), (index) => this.searched(ref, index, name, key));
      }
    }
  }

  /**
   * A search's answer, made from the index (a scan of a few milliseconds)
   * and then kept with the answers made at run time, counted at its size and
   * its text's, so a repeated search costs what a stored answer does. Its
   * ETag names the index and the text: the same text over the same index
   * always answers the same bytes.
   */
  private async searched(ref: FileRef, index: SearchIndex | null, text: string, key?: string): Promise<Answer> {
    const body = new TextEncoder().encode(JSON.stringify(index?.search(text, key) ?? []));
    const id = await idOf(new TextEncoder().encode(`search ${ref} ${text}`));
    const answer: Answer = { ids: { identity: id }, etags: { identity: `"${id}"` }, bytes: () => body };
    this.joins.set(`search\u0000${text}`, { answer, size: body.length + text.length * 2 + 64 });
    return answer;
  }

  /** A name's answer across all years, or at one year, from its shard. */
  private inShard(shard: Shard, name: string, year: string | undefined): Answer | null {
    const entry = Object.hasOwn(shard, name) ? shard[name] : undefined;
    const ref = year === undefined ? entry?.[0] : entry && Object.hasOwn(entry[1], year) ? entry[1][year] : undefined;
    return ref ? this.stored(ref) : null;
  }

  /** An id's answer from its shard. */
  private inIdShard(shard: IdShard, id: string): Answer | null {
    return Object.hasOwn(shard, id) ? this.stored(shard[id]) : null;
  }

  /** The manifest, parsed again only when the source hands back other bytes. */
  manifest(source: DataSource): Maybe<Manifest> {
    const bytes = source.read(MANIFEST_PATH);
    return isPromise(bytes) ? bytes.then((b) => this.parsedManifestOf(b)) : this.parsedManifestOf(bytes);
  }

  private parsedManifestOf(bytes: Uint8Array | null): Manifest {
    if (!bytes) throw new DataError('missing manifest');
    if (this.parsedManifest?.bytes === bytes) return this.parsedManifest.manifest;
    // The same bytes read again (the edge re-reads the manifest every minute): nothing to parse, no join to drop.
    if (this.parsedManifest && sameBytes(this.parsedManifest.bytes, bytes)) {
      this.parsedManifest.bytes = bytes;
      return this.parsedManifest.manifest;
    }
    let manifest: Manifest;
    try {
      manifest = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      throw new DataError('corrupt manifest');
    }
    if (
      manifest?.format !== 9 ||
      typeof manifest.categories !== 'string' ||
      typeof manifest.joins !== 'string' ||
      typeof manifest.categoryYears !== 'string' ||
      !Array.isArray(manifest.shards) ||
      !Array.isArray(manifest.ids) ||
      !Array.isArray(manifest.search) ||
      typeof manifest.categoryList !== 'string'
    ) {
      throw new DataError('unknown manifest format');
    }
    this.parsedManifest = { bytes, manifest };
    this.joins.clear(); // joins are slices of the files the previous manifest named
    return manifest;
  }

  /** The bytes at `path` (the file of `id`), once they are known to be what their id (a hash of them) says. */
  verifiedRead(source: DataSource, path: string, id: string): Maybe<Uint8Array> {
    const bytes = source.read(path);
    return isPromise(bytes) ? bytes.then((b) => this.verifiedBytes(b, id, path)) : this.verifiedBytes(bytes, id, path);
  }

  private verifiedBytes(bytes: Uint8Array | null, id: string, path: string): Maybe<Uint8Array> {
    if (!bytes) throw new DataError(`missing ${path}`);
    if (this.verified.has(bytes)) return bytes;
    let checked = this.verifying.get(bytes);
    if (!checked) {
      checked = idOf(bytes)
        .then((actual) => {
          if (actual !== id) throw new DataError(`corrupt ${path}`);
          this.verified.add(bytes);
          return bytes;
        })
        .finally(() => this.verifying.delete(bytes));
      this.verifying.set(bytes, checked);
    }
    return checked;
  }

  /** The answer a ref names, made once per ref. */
  private stored(ref: FileRef): StoredAnswer {
    let answer = this.answers.peek(ref);
    if (!answer) {
      const parsed = parseRef(ref);
      if (!parsed) throw new DataError(`bad ref ${ref}`);
      answer = new StoredAnswer(parsed, this);
      this.answers.set(ref, answer);
    }
    return answer;
  }

  /** The shard among `shards` (the name index's or the id index's) that holds `key`. */
  private shard<T extends Shard | IdShard>(source: DataSource, shards: FileRef[], key: string): Maybe<T> {
    const ref = shards[shardOf(key, shards.length)];
    if (!ref) throw new DataError('no shard for this name');
    return this.indexFile<T>(source, ref);
  }

  /** A stored JSON file the lookups read (a shard, the category index or years, the join index), parsed. */
  private indexFile<T>(source: DataSource, ref: FileRef, parse: (text: string) => T = JSON.parse): Maybe<T> {
    const file = this.stored(ref);
    const bytes = file.bytes('identity', source);
    return isPromise(bytes) ? bytes.then((b) => this.parsedIndex<T>(file.ids.identity, b, parse)) : this.parsedIndex<T>(file.ids.identity, bytes, parse);
  }

  /** An index file's parsed content, parsed again only when the source hands back other bytes (a file damaged or replaced on disk). */
  private parsedIndex<T>(id: string, bytes: Uint8Array, parse: (text: string) => T): T {
    const hit = this.indexes.peek(id);
    if (hit?.bytes === bytes) return hit.parsed as T;
    let parsed: T;
    try {
      parsed = parse(new TextDecoder().decode(bytes));
    } catch {
      throw new DataError(`unparsable index ${id}`);
    }
    this.indexes.set(id, { size: bytes.length * 3, bytes, parsed });
    return parsed;
  }

  /** The search over the full category names of `list`, made once per parsed list. */
  private namesOf(list: ManifestCategory[]): NameIndex {
    if (this.names?.list !== list) this.names = { list, index: new NameIndex(list) };
    return this.names.index;
  }

  /** Categories whose full name contains `text`: across all years a stored answer (one name's, or the build's join of several); at one year, one name's, or a join. */
  private category(source: DataSource, manifest: Manifest, text: string, year: string | undefined): Maybe<Answer | null> {
    return andThen(this.indexFile<CategoryIndex>(source, manifest.categories), (index) => {
      const matches = this.namesOf(index.categories).containing(text);
      if (matches.length === 0) return null;
      if (year !== undefined) return andThen(this.indexFile<CategoryYears>(source, manifest.categoryYears), (years) => this.atOneYear(source, manifest, years, matches, text, year));
      if (matches.length === 1) return this.stored(index.categories[matches[0]].all);
      const key = categorySetKey(matches);
      const ref = Object.hasOwn(index.joined, key) ? index.joined[key] : null;
      if (!ref) throw new DataError(`no joined answer for ${key}`);
      return this.stored(ref);
    });
  }

  /** The names among `matches` used at `year`: one name's stored answer there, or their join (made once, then kept). */
  private atOneYear(source: DataSource, manifest: Manifest, years: CategoryYears, matches: number[], text: string, year: string): Maybe<Answer | null> {
    const used = matches.filter((place) => years[place] && Object.hasOwn(years[place], year));
    if (used.length === 0) return null;
    if (used.length === 1) return this.stored(years[used[0]][year]);
    const key = `${year}\u0000${text}`;
    const hit = this.joins.get(key);
    if (hit) return hit.answer;
    return this.join(source, manifest, used, year).then((joined) => {
      this.joins.set(key, { ...joined, size: joined.size + key.length * 2 });
      return joined.answer;
    });
  }

  /**
   * A joined answer at one year: `[`, each matching element of the year's answer,
   * the commas, `]`, copied into one buffer once, when the join is made. (Kept
   * as pieces written one by one instead, the widest joins cost the Node
   * server four times the CPU per request, for no saving in memory the bench
   * could see.)
   */
  private async join(source: DataSource, manifest: Manifest, places: number[], year: string): Promise<Joined> {
    const joins = await this.indexFile<JoinIndex>(source, manifest.joins);
    const from = Object.hasOwn(manifest.years, year) ? manifest.years[year] : null;
    if (!from) throw new DataError(`no answer for ${year}`);
    // The year's own answer holds every CategoryYearMatch: the elements of the matching names, in the ceremony's order.
    const wanted = new Set(places);
    const ranges = (Object.hasOwn(joins, year) ? joins[year] : []).filter(([place]) => wanted.has(place)).map(([, start, end]) => [start, end]);
    if (ranges.length < places.length) throw new DataError(`the join index lacks a name used at ${year}`); // each name used there has an element there
    const stored = this.stored(from);
    const bytes = await stored.bytes('identity', source);
    const pieces: Uint8Array[] = [OPEN];
    ranges.forEach(([start, end], i) => {
      if (i > 0) pieces.push(COMMA);
      pieces.push(bytes.subarray(start, end));
    });
    pieces.push(CLOSE);
    // The bytes are fully determined by the answer they are cut from (named by its hash) and where: so is the ETag.
    const id = await idOf(new TextEncoder().encode(`join ${stored.ids.identity} ${ranges.join(' ')}`));
    const body = concatBytes(pieces);
    return { size: body.length, answer: { ids: { identity: id }, etags: { identity: `"${id}"` }, bytes: () => body } };
  }
}
