/**
 * Keys, sign-in tokens and sessions in a Netlify Blobs store (production): a
 * site-scoped store, so records survive deploys and the portal function and
 * the edge function see the same ones. JSON blobs, named by hashes (never a
 * secret, never an address):
 *
 * - `accounts/<sha256 of address>`: the address's active key and its key in
 *   a grace period (`ending`, with its end), the one place that decides them.
 *   Written only with `onlyIfNew` / `onlyIfMatch`, so of two writers at once
 *   one wins and the other reads again: one active key and one key in grace
 *   per address under any concurrency.
 * - `keys/<sha256 of key>`: what the edge function reads to check a key (its
 *   `revokedAt`: null while current, else its end, past or to come). A
 *   rotation or revocation gives the old key's record its end *before* it
 *   changes the account, by a conditional write that only ever moves an end
 *   earlier, and a new key's record is created with `onlyIfNew`, so a record
 *   revoked by a concurrent writer is never brought back or given more time.
 * - `tokens/<sha256>`: a sign-in token, used up by a conditional write
 *   (single use) before the expiry `Keys` gave it; `sessions/<sha256>`: a
 *   portal session, until its expiry; `sign-ins/<sha256 of address>`: the
 *   times of the address's sign-in links still inside the quota's window,
 *   which `addToken` checks and extends in one conditional write.
 *
 * The rules (lifetimes, the per-address limit) are `Keys`'s: this store only
 * keeps what it is given and checks the conditions it is handed.
 *
 * Every write carries a fresh `rev`, so two writes never leave equal content.
 * A record that exists but cannot be read (not JSON, not an object, an
 * account of another shape) is an
 * error (`BlobsRecordError`: the portal answers 503), never taken for a
 * missing one, and never written over.
 */
import { getStore, type Store } from '@netlify/blobs';
import pLimit from 'p-limit';
import { KEY_CACHE_TTL_MS, type KeyCacheOptions } from '../../src/keys/cache.ts';
import type {
  EndingKey,
  KeyBackend,
  KeyEnd,
  KeyInfo,
  KeyListing,
  NewKey,
  NewToken,
  StoppedKey,
  TokenOutcome,
  TokenQuota,
} from '../../src/keys/contract.ts';
import { Keys } from '../../src/keys/rules.ts';
import { hashSecret } from '../../src/keys/secrets.ts';

export const KEY_STORE_NAME = 'api-keys';
/**
 * How long the edge function reuses what it read about a key (the key
 * cache's default, 1 s); a revoked key stops working within about this.
 */
export const EDGE_CACHE_TTL_MS = KEY_CACHE_TTL_MS;
/** Parallel reads when listing every key. */
export const LIST_CONCURRENCY = 16;
/** Conditional writes tried before an operation gives up (each retry means another writer won). */
const MAX_ATTEMPTS = 25;

/** What the backend uses of a Blobs store. */
export type KeyBlobs = Pick<Store, 'get' | 'getWithMetadata' | 'setJSON' | 'list' | 'delete'>;

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

interface AccountKey {
  hash: string;
  id: string;
  createdAt: number;
}
interface Account {
  email: string;
  active: AccountKey | null;
  /** The key in its grace period after a rotation, and its end; absent in records written before grace periods. */
  ending?: (AccountKey & { endsAt: number }) | null;
}
interface KeyBlob {
  email: string;
  id: string;
  createdAt: number;
  revokedAt: number | null;
}
interface TokenBlob {
  email: string;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}
interface SessionBlob {
  email: string;
  expiresAt: number;
}
interface SignIns {
  times: number[];
}

const HASH = /^[0-9a-f]{64}$/;
/** The name `/health` reads: all zeros, a sha256 no key has. */
const PROBE_HASH = '0'.repeat(64);
const name = (kind: 'accounts' | 'keys' | 'tokens' | 'sessions' | 'sign-ins', hash: string) => {
  if (!HASH.test(hash)) throw new RangeError(`Expected a sha256 hex name, got ${JSON.stringify(hash)}`);
  return `${kind}/${hash}`;
};
const rev = () => crypto.randomUUID();
const pause = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(5 * 2 ** attempt, 200)));

/** Past `MAX_ATTEMPTS` conditional writes lost to other writers. */
export class BlobsContentionError extends Error {}
/** A record that exists but is not one of ours: left as it is, and nothing is decided from it. */
export class BlobsRecordError extends Error {}

/** Whether a value is a key as an account names it (and, for `ending`, with a finite `endsAt`). */
/** The keys a rotate or revoke of `account` stopped: its active key, then its key in grace that ended with it. */
function stoppedIn(account: Account, ended: AccountKey | null | undefined): StoppedKey[] {
  return [account.active!, ...(ended ? [ended] : [])].map(({ hash, id }) => ({ hash, id }));
}

function isAccountKey(value: unknown, ending = false): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { hash, id, createdAt, endsAt } = value as Record<string, unknown>;
  if (ending && !(typeof endsAt === 'number' && Number.isFinite(endsAt))) return false;
  return (
    typeof hash === 'string' &&
    HASH.test(hash) &&
    typeof id === 'string' &&
    typeof createdAt === 'number' &&
    Number.isFinite(createdAt)
  );
}

/**
 * Whether a record is an account as this store writes it: an address, its active key or null
 * (never a missing or other `active`), and its key in grace, null or (older records) absent.
 */
function isAccount(value: object): boolean {
  const { email, active, ending } = value as Record<string, unknown>;
  if (typeof email !== 'string' || active === undefined) return false;
  if (active !== null && !isAccountKey(active)) return false;
  return ending === undefined || ending === null || isAccountKey(ending, true);
}

/**
 * A record's value; a BlobsRecordError for one that is not a JSON object, or
 * (an account, which decides who has a key) not of the account's shape: such
 * a record is never read as "no key", so nothing is issued beside the key it
 * may still name.
 */
function parseRecord<T>(blob: string, text: string): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BlobsRecordError(
      `The key store's record ${blob} cannot be read (it is not one of its JSON records); it was left as it is`,
    );
  }
  if (blob.startsWith('accounts/') && !isAccount(value)) {
    throw new BlobsRecordError(
      `The key store's record ${blob} cannot be read (it is not an account record: {"email", "active": null or {"hash", "id", "createdAt"}}); it was left as it is`,
    );
  }
  return value as T;
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
  private readonly source: KeyBlobs | (() => KeyBlobs);
  private readonly eventual?: () => KeyBlobs;

  constructor(source: KeyBlobs | (() => KeyBlobs), eventual?: () => KeyBlobs) {
    this.source = source;
    this.eventual = eventual;
  }

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

  /** A record, or null when there is none; one that cannot be read throws (it is never taken for none). */
  private async read<T>(blob: string): Promise<T | null> {
    const text = await this.withStore((store) => store.get(blob, { type: 'text' }));
    return text === null ? null : parseRecord<T>(blob, text);
  }

  /** A record with its ETag, or null when there is none; one that cannot be read throws, so no write goes over it. */
  private async readTagged<T>(blob: string): Promise<{ value: T; etag: string | undefined } | null> {
    const got = await this.withStore((store) => store.getWithMetadata(blob, { type: 'text' }));
    return got ? { value: parseRecord<T>(blob, got.data), etag: got.etag } : null;
  }

  private write(blob: string, value: object, options?: { onlyIfNew: true } | { onlyIfMatch: string }) {
    return this.withStore((store) => store.setJSON(blob, { ...value, rev: rev() }, options));
  }

  /**
   * Read, decide, write only if nobody wrote in between; on losing, read
   * again. `decide` answers the new value, or `undefined` to stop without
   * writing; `before` runs ahead of each write attempt (see the file's top).
   */
  private async update<T extends object>(
    blob: string,
    decide: (current: T | null) => T | undefined,
    before?: (current: T | null) => Promise<void>,
  ): Promise<{ current: T | null; written: boolean }> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const got = await this.readTagged<T>(blob);
      const current = got?.value ?? null;
      const next = decide(current);
      if (next === undefined) return { current, written: false };
      await before?.(current);
      const result = await this.write(blob, next, got?.etag ? { onlyIfMatch: got.etag } : { onlyIfNew: true });
      if (result.modified) return { current, written: true };
      await pause(attempt);
    }
    throw new BlobsContentionError(
      `Gave up writing ${blob.split('/')[0]} after ${MAX_ATTEMPTS} attempts lost to other writers`,
    );
  }

  /**
   * One strong read of the key's record, its stored end: the cache above
   * (`Keys`) keeps and shares answers, and decides with its clock.
   */
  async keyEnd(hash: string): Promise<KeyEnd> {
    const record = await this.read<KeyBlob>(name('keys', hash));
    if (record === null || typeof record.email !== 'string') return undefined;
    // An end that is not a number is no end to trust: ended long ago.
    return record.revokedAt === null ? null : typeof record.revokedAt === 'number' ? record.revokedAt : 0;
  }

  /**
   * `/health`: one strong read of a key record that cannot exist (all
   * zeros: no key hashes to it); rejects when Blobs cannot answer.
   */
  async probe(): Promise<void> {
    await this.read<KeyBlob>(name('keys', PROBE_HASH));
  }

  async addToken(token: NewToken, quota: TokenQuota): Promise<TokenOutcome> {
    let oldest = 0;
    const { written } = await this.update<SignIns>(name('sign-ins', hashSecret(token.email)), (current) => {
      const times = (current?.times ?? []).filter((t) => typeof t === 'number' && t > quota.since);
      if (times.length >= quota.max) {
        oldest = Math.min(...times);
        return undefined;
      }
      return { times: [...times, token.createdAt] };
    });
    if (!written) return { stored: false, oldest };
    const record: TokenBlob = {
      email: token.email,
      createdAt: token.createdAt,
      expiresAt: token.expiresAt,
      usedAt: null,
    };
    await this.write(name('tokens', token.hash), record, { onlyIfNew: true });
    return { stored: true };
  }

  async dropToken(token: NewToken): Promise<void> {
    await this.withStore((store) => store.delete(name('tokens', token.hash)));
    await this.update<SignIns>(name('sign-ins', hashSecret(token.email)), (current) => {
      const times = current?.times ?? [];
      const at = times.indexOf(token.createdAt);
      return at === -1 ? undefined : { times: times.filter((_, i) => i !== at) };
    });
  }

  async openSession(
    tokenHash: string,
    sessionHash: string,
    now: number,
    sessionExpiresAt: number,
  ): Promise<string | null> {
    const blob = name('tokens', tokenHash);
    const got = await this.readTagged<TokenBlob>(blob);
    const token = got?.value;
    if (!got?.etag || !token || token.usedAt !== null || !(token.expiresAt > now) || typeof token.email !== 'string')
      return null;
    // Single use: of two uses at once, only one conditional write succeeds.
    const { modified } = await this.write(blob, { ...token, usedAt: now }, { onlyIfMatch: got.etag });
    if (!modified) return null;
    const session: SessionBlob = { email: token.email, expiresAt: sessionExpiresAt };
    await this.write(name('sessions', sessionHash), session, { onlyIfNew: true });
    return token.email;
  }

  async sessionEmail(sessionHash: string, now: number): Promise<string | null> {
    const session = await this.read<SessionBlob>(name('sessions', sessionHash));
    return session && session.expiresAt > now && typeof session.email === 'string' ? session.email : null;
  }

  async endSession(sessionHash: string): Promise<void> {
    await this.withStore((store) => store.delete(name('sessions', sessionHash)));
  }

  async activeKey(email: string): Promise<KeyInfo | null> {
    const account = await this.read<Account>(name('accounts', hashSecret(email)));
    const active = account?.active;
    return active ? { id: active.id, createdAt: new Date(active.createdAt).toISOString() } : null;
  }

  async endingKey(email: string, now: number): Promise<EndingKey | null> {
    const ending = (await this.read<Account>(name('accounts', hashSecret(email))))?.ending;
    return ending && ending.endsAt > now ? { id: ending.id, endsAt: new Date(ending.endsAt).toISOString() } : null;
  }

  /**
   * Gives a key's record the end `end` (creating it so, if its issuer has not
   * written it yet), unless it already ends no later: a conditional write
   * that only ever moves an end earlier, so a key revoked by a concurrent
   * writer is never given time back.
   */
  private async retire(key: AccountKey | null | undefined, email: string, end: number): Promise<void> {
    if (!key) return;
    const record: KeyBlob = { email, id: key.id, createdAt: key.createdAt, revokedAt: end };
    await this.update<KeyBlob>(name('keys', key.hash), (current) =>
      typeof current?.revokedAt === 'number' && current.revokedAt <= end ? undefined : record,
    );
  }

  /** The account's key in its grace period at `now`, or null (none, or its end has passed). */
  private graced(account: Account | null, now: number): Account['ending'] {
    const ending = account?.ending;
    return ending && ending.endsAt > now ? ending : null;
  }

  private async publish(key: NewKey): Promise<void> {
    const record: KeyBlob = { email: key.email, id: key.id, createdAt: key.createdAt, revokedAt: null };
    await this.write(name('keys', key.hash), record, { onlyIfNew: true });
  }

  async issue(key: NewKey): Promise<boolean> {
    const { written } = await this.update<Account>(name('accounts', hashSecret(key.email)), (current) =>
      current?.active
        ? undefined
        : { email: key.email, active: { hash: key.hash, id: key.id, createdAt: key.createdAt }, ending: null },
    );
    if (written) await this.publish(key);
    return written;
  }

  async rotate(key: NewKey, now: number, endsAt: number, expected?: string): Promise<StoppedKey[]> {
    const { current, written } = await this.update<Account>(
      name('accounts', hashSecret(key.email)),
      (current) => {
        if (!current?.active || (expected !== undefined && current.active.hash !== expected)) return undefined;
        return {
          email: key.email,
          active: { hash: key.hash, id: key.id, createdAt: key.createdAt },
          ending: endsAt > now ? { ...current.active, endsAt } : null,
        };
      },
      async (current) => {
        await this.retire(this.graced(current, now), key.email, now);
        await this.retire(current!.active, key.email, endsAt);
      },
    );
    if (!written) return [];
    await this.publish(key);
    return stoppedIn(current!, this.graced(current, now));
  }

  async revoke(email: string, now: number, expected?: string): Promise<StoppedKey[]> {
    const { current, written } = await this.update<Account>(
      name('accounts', hashSecret(email)),
      (current) =>
        !current?.active || (expected !== undefined && current.active.hash !== expected)
          ? undefined
          : { email, active: null, ending: null },
      async (current) => {
        await this.retire(this.graced(current, now), email, now);
        await this.retire(current!.active, email, now);
      },
    );
    if (!written) return [];
    return stoppedIn(current!, this.graced(current, now));
  }

  async endGrace(email: string, now: number, expected?: string): Promise<StoppedKey | null> {
    const { current, written } = await this.update<Account>(
      name('accounts', hashSecret(email)),
      (current) => {
        const ending = this.graced(current, now);
        return !ending || (expected !== undefined && ending.hash !== expected)
          ? undefined
          : { email, active: current!.active, ending: null };
      },
      (current) => this.retire(this.graced(current, now), email, now),
    );
    const ended = written ? this.graced(current, now) : null;
    return ended ? { hash: ended.hash, id: ended.id } : null;
  }

  async owner(hash: string): Promise<{ email: string; end: number | null } | null> {
    const record = await this.read<KeyBlob>(name('keys', hash));
    if (!record || typeof record.email !== 'string') return null;
    return {
      email: record.email,
      end: record.revokedAt === null ? null : typeof record.revokedAt === 'number' ? record.revokedAt : 0,
    };
  }

  async *list(): AsyncIterable<KeyListing> {
    const { blobs } = await this.withStore((store) => store.list({ prefix: 'keys/' }));
    const hashes = blobs.map((b) => b.key.slice('keys/'.length)).filter((h) => HASH.test(h));
    const records = await pLimit(LIST_CONCURRENCY).map(hashes, (hash) => this.read<KeyBlob>(name('keys', hash)));
    const listed = records
      .filter((r): r is KeyBlob => r !== null && typeof r.email === 'string')
      .sort((a, b) => a.createdAt - b.createdAt);
    for (const r of listed) {
      yield {
        id: r.id,
        email: r.email,
        createdAt: new Date(r.createdAt).toISOString(),
        revokedAt: r.revokedAt === null ? null : new Date(r.revokedAt).toISOString(),
      };
    }
  }
}

/** The site's key store as a backend; access comes from the Netlify environment unless given. */
export function blobsKeyStore(options: BlobsKeyStoreOptions = {}): BlobsKeyBackend {
  const { name: storeName = KEY_STORE_NAME, consistency = 'strong', ...access } = options;
  const eventual = () => getStore({ name: storeName, consistency: 'eventual', ...access });
  return new BlobsKeyBackend(
    () => getStore({ name: storeName, consistency, ...access }),
    consistency === 'strong' ? eventual : undefined,
  );
}

/** Keys over Blobs, for the portal function: strong reads, no cache, so every decision sees the latest writes. */
export function portalKeys(options: BlobsKeyStoreOptions = {}): Keys {
  return new Keys(blobsKeyStore(options));
}

/**
 * The edge function's key check: strong reads (no Blobs cache lag) behind the
 * key cache (src/keys/cache.ts): each key read at most once per `ttlMs`
 * (default 1 s, at most 2 s) per isolate, answered synchronously while the
 * cache holds it, so a revoked key stops working everywhere within about
 * `ttlMs`. Create it once, at module level, so the cache lives as long as the
 * isolate. (Should the environment offer no strong reads, it falls back to
 * eventual ones: then up to `ttlMs` + 60 s.)
 */
export function edgeKeyStore(options: BlobsKeyStoreOptions & KeyCacheOptions = {}): Keys {
  const { ttlMs = EDGE_CACHE_TTL_MS, max, now = Date.now, ...blobs } = options;
  return new Keys(blobsKeyStore(blobs), now, { ttlMs, max });
}
