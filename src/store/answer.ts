/**
 * What the archive hands the reply stage: where a stored file's bytes come
 * from (a DataSource, one per runtime) and an Answer, which is data: its id
 * and ETag, and where its bytes are (or the bytes themselves, for an answer
 * made at run time). The reply stage answers a 304 or asks for the bytes,
 * and the archive reads them once; neither calls the other.
 */
import type { Maybe } from '../shared/maybe.ts';

/** A stored file as a stream, and its length when the platform says it. */
export interface StoredStream {
  body: ReadableStream<Uint8Array>;
  length: number | null;
}

/** Reads a file of the built output (path relative to dist/); null when it is not there. Synchronous when it can be. */
export interface DataSource {
  read(path: string): Maybe<Uint8Array | null>;
  /**
   * Only where the platform itself keeps every file as the deploy uploaded
   * it, addressed by its content (Cloudflare's static assets, checked against
   * their names before upload): a whole file as a stream the runtime passes
   * on, its bytes neither read into memory nor hashed again. An answer in a
   * file of its own is sent this way; packs and index files are always read
   * and checked.
   */
  stream?(path: string): Promise<StoredStream | null>;
  /**
   * Only where the runtime carries some files in its own code, checked
   * against their names when put there (a Worker's bundle,
   * adapters/_cloudflare/worker-bundle.node.ts): such a file's text, which the archive parses as
   * it is, neither hashed nor decoded again; undefined for any other file.
   * An index file stored as a range of a pack is asked for by the path a
   * file of its own id would have (`dataPath(id)`).
   */
  checkedText?(path: string): string | undefined;
}

/**
 * Where a stored answer is: the stored file (its path under dist/ and its
 * id, which its bytes are checked against), and the range of it that is the
 * answer (null: the whole file), of its inflated bytes (a pack is stored
 * gzipped).
 */
export interface StoredPlace {
  path: string;
  file: string;
  range: [number, number] | null;
}

/**
 * An answer the archive found, in its one form: its id and ETag, and either
 * where it is stored (`at`) or, made at run time, its bytes (`body`), or,
 * for a join the Worker cuts from a file it carries, a Blob of them (`blob`:
 * held by the runtime outside the JavaScript heap, and sent as a stream).
 */
export interface Answer {
  id: string;
  etag: string;
  at?: StoredPlace;
  body?: Uint8Array;
  blob?: Blob;
}
