/**
 * What the archive hands the reply stage: where a stored file's bytes come
 * from (a DataSource, one per runtime) and an Answer that reads its bytes from
 * one. Both stages depend on these shapes and on nothing of each other, so
 * finding an answer and replying with it stay separate modules.
 */
import type { Encoding } from './refs.ts';
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
}

/**
 * An answer the archive found: an id and its ETag per stored encoding
 * (identity always), and the bytes of each, read from `source` when they are
 * not in memory.
 */
export interface Answer {
  ids: { identity: string } & Partial<Record<'gzip' | 'br', string>>;
  etags: { identity: string } & Partial<Record<'gzip' | 'br', string>>;
  bytes(encoding: Encoding, source: DataSource): Maybe<Uint8Array>;
  /** The stored bytes as a stream, when `source` streams and they are a file of their own; else null (use `bytes`). */
  stream?(encoding: Encoding, source: DataSource): Promise<StoredStream> | null;
}
