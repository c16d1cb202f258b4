/**
 * Key records in a Netlify Blobs store (production): a site-scoped store, so
 * keys survive deploys and every function and edge function of the site sees
 * the same records. One JSON blob per key, named by the key's id (its first 12
 * characters); the blob holds the sha256 of the key, never the key.
 */
import { getStore, type Store } from '@netlify/blobs';
import { CachedKeyBackend, type KeyBackend, type KeyRecord, Keys } from './keys.ts';

export const KEY_STORE_NAME = 'api-keys';
/** How long the edge function trusts a record it read; a revoked key stops working within this. */
export const EDGE_CACHE_TTL_MS = 30_000;
/** Parallel reads when listing every record. */
export const LIST_CONCURRENCY = 16;

/** What the backend uses of a Blobs store. */
export type KeyBlobs = Pick<Store, 'get' | 'setJSON' | 'list'>;

export interface BlobsKeyStoreOptions {
  /** Store name; default `api-keys`. */
  name?: string;
  /**
   * `strong` reads bypass the Blobs cache, so a write is seen at once (default);
   * `eventual` reads may lag up to 60 s.
   */
  consistency?: 'strong' | 'eventual';
  /** Explicit access (tests, scripts). On Netlify these come from the environment. */
  siteID?: string;
  token?: string;
  apiURL?: string;
  edgeURL?: string;
  uncachedEdgeURL?: string;
  fetch?: typeof globalThis.fetch;
}

/** Blob ids the backend will ask for: a key id's alphabet, nothing that could name another path. */
const ID = /^[A-Za-z0-9_-]{1,64}$/;

function asRecord(value: unknown, id: string): KeyRecord | null {
  if (typeof value !== 'object' || value === null) return null;
  const r = value as Partial<KeyRecord>;
  if (r.id !== id || typeof r.hash !== 'string' || typeof r.email !== 'string' || typeof r.created !== 'string') return null;
  if (r.revoked !== undefined && typeof r.revoked !== 'string') return null;
  return r as KeyRecord;
}

export class BlobsKeyBackend implements KeyBackend {
  private store: KeyBlobs | null = null;
  /** True once strong reads proved unavailable here and the backend fell back to eventual ones. */
  degraded = false;

  /**
   * `source` may be a function, so that nothing asks the environment for Blobs
   * access before the first request. `eventual`, when given, is used instead if
   * the environment cannot do strong reads (no `uncachedEdgeURL`): slower to see
   * changes (up to 60 s more) rather than no key check at all.
   */
  constructor(
    private readonly source: KeyBlobs | (() => KeyBlobs),
    private readonly eventual?: () => KeyBlobs,
  ) {}

  private blobs(): KeyBlobs {
    return (this.store ??= typeof this.source === 'function' ? this.source() : this.source);
  }

  private async withStore<T>(use: (store: KeyBlobs) => Promise<T>): Promise<T> {
    try {
      return await use(this.blobs());
    } catch (error) {
      if ((error as Error)?.name !== 'BlobsConsistencyError' || !this.eventual || this.degraded) throw error;
      this.degraded = true;
      this.store = this.eventual();
      return use(this.store);
    }
  }

  async get(id: string): Promise<KeyRecord | null> {
    if (!ID.test(id)) return null;
    const text = await this.withStore((store) => store.get(id, { type: 'text' }));
    if (text === null) return null;
    try {
      return asRecord(JSON.parse(text), id);
    } catch {
      return null; // not a key record: treated as no key, never as a crash on the request path
    }
  }

  async put(record: KeyRecord): Promise<void> {
    if (!ID.test(record.id)) throw new RangeError(`Expected a key id of letters, digits, - and _, got ${JSON.stringify(record.id)}`);
    await this.withStore((store) => store.setJSON(record.id, record));
  }

  async all(): Promise<KeyRecord[]> {
    const { blobs } = await this.withStore((store) => store.list());
    const ids = blobs.map((b) => b.key).filter((k) => ID.test(k));
    const records: (KeyRecord | null)[] = new Array(ids.length).fill(null);
    let next = 0;
    const worker = async () => {
      while (next < ids.length) {
        const i = next++;
        records[i] = await this.get(ids[i]);
      }
    };
    await Promise.all(Array.from({ length: Math.min(LIST_CONCURRENCY, ids.length) }, worker));
    return records.filter((r): r is KeyRecord => r !== null);
  }
}

/** The site's key store as a backend; access comes from the Netlify environment unless given. */
export function blobsKeyStore(options: BlobsKeyStoreOptions = {}): BlobsKeyBackend {
  const { name = KEY_STORE_NAME, consistency = 'strong', ...access } = options;
  const eventual = () => getStore({ name, consistency: 'eventual', ...access });
  return new BlobsKeyBackend(() => getStore({ name, consistency, ...access }), consistency === 'strong' ? eventual : undefined);
}

/** Keys over Blobs, for the portal function: strong reads, so one-key-per-address sees the latest writes. */
export function portalKeys(options: BlobsKeyStoreOptions = {}): Keys {
  return new Keys(blobsKeyStore(options));
}

/**
 * The edge function's key check: strong reads (no Blobs cache lag) behind an
 * in-memory cache of `ttlMs` (default 30 s, at most 60 s), so a revoked key
 * stops working everywhere within `ttlMs`. Create it once, at module level, so
 * the cache lives as long as the isolate. (Should the environment offer no
 * strong reads, it falls back to eventual ones: then up to `ttlMs` + 60 s.)
 */
export function edgeKeyStore(options: BlobsKeyStoreOptions & { ttlMs?: number; now?: () => number } = {}): Keys {
  const { ttlMs = EDGE_CACHE_TTL_MS, now, ...blobs } = options;
  if (!(ttlMs >= 0 && ttlMs <= 60_000)) throw new RangeError(`Expected \`ttlMs\` from 0 to 60000, got ${ttlMs}`);
  return new Keys(new CachedKeyBackend(blobsKeyStore(blobs), ttlMs, 10_000, now));
}
