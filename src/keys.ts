/**
 * API keys: random, 192 bits, URL-safe. Only a sha256 of each key is stored,
 * with its first characters as a lookup id (shown by `keys list`); a presented
 * key is checked by comparing hashes in constant time. Storage is a small
 * backend interface: a JSON file for development and tests, Netlify Blobs in
 * production.
 */
import { sha256Hex } from './refs.ts';

export const KEY_PREFIX = 'faa_';
/** Characters of a key kept as its lookup id (prefix + 8 random characters, 48 bits). */
export const KEY_ID_LENGTH = KEY_PREFIX.length + 8;
const KEY_SHAPE = /^faa_[A-Za-z0-9_-]{32}$/;

export interface KeyRecord {
  /** First characters of the key: how a key is found and listed, never enough to use it. */
  id: string;
  /** sha256 of the whole key, hex. */
  hash: string;
  /** Owner's e-mail address. */
  email: string;
  /** ISO time the key was issued. */
  created: string;
  /** ISO time the key was revoked or rotated away; absent while it works. */
  revoked?: string;
}

/** Where key records live. */
export interface KeyBackend {
  get(id: string): Promise<KeyRecord | null>;
  put(record: KeyRecord): Promise<void>;
  all(): Promise<KeyRecord[]>;
}

/** What the request path needs: is this key good? */
export interface KeyStore {
  verify(key: string): Promise<boolean>;
}

export function generateKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return KEY_PREFIX + btoa(binary).replaceAll('+', '-').replaceAll('/', '_');
}

export const keyId = (key: string) => key.slice(0, KEY_ID_LENGTH);

/** Compares two equal-length strings without an early exit. */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** A key as logs may show it: its id and an ellipsis, never the whole key. */
export function redactKey(key: string): string {
  return key.length > KEY_ID_LENGTH ? `${key.slice(0, KEY_ID_LENGTH)}…` : key.length > 4 ? `${key.slice(0, 4)}…` : '…';
}

/**
 * Redacts the value of every `apikey=` segment (any case, even percent-encoded)
 * and anything else shaped like one of our keys, wherever it stands in a log line.
 */
export function redactLine(line: string): string {
  return line
    .replace(/(api(?:k|%6b)ey(?:=|%3d))([^/\s?#]*)/gi, (_, label: string, key: string) => `${label}${redactKey(key)}`)
    .replace(/faa_[A-Za-z0-9_-]{32}/g, (key) => redactKey(key));
}

export class KeyError extends Error {
  constructor(
    readonly status: 400 | 403 | 409,
    message: string,
  ) {
    super(message);
  }
}

const EMAIL = /^[^\s@<>()[\]\\,;:"]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function isEmail(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 254 && EMAIL.test(value);
}

/** Issue, rotate, revoke, list and verify keys over any backend. */
export class Keys implements KeyStore {
  constructor(
    readonly backend: KeyBackend,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async verify(key: string): Promise<boolean> {
    if (!KEY_SHAPE.test(key)) return false;
    const record = await this.backend.get(keyId(key));
    if (!record || record.revoked) return false;
    return constantTimeEqual(record.hash, await sha256Hex(key));
  }

  /** A new key for `email`; refused while that e-mail already holds an active key. */
  async issue(email: string): Promise<string> {
    if (!isEmail(email)) throw new KeyError(400, 'Invalid email: expected an address like name@example.org');
    const normalized = email.toLowerCase();
    const active = (await this.backend.all()).find((r) => r.email === normalized && !r.revoked);
    if (active) {
      throw new KeyError(409, 'This email already has an active key. Rotate it with the current key, or revoke it and ask again.');
    }
    return this.create(normalized);
  }

  /** Replaces a working key with a new one for the same owner; the old key stops working. */
  async rotate(key: string): Promise<string> {
    const record = await this.active(key);
    const next = await this.create(record.email);
    await this.backend.put({ ...record, revoked: this.now().toISOString() });
    return next;
  }

  async revoke(key: string): Promise<void> {
    const record = await this.active(key);
    await this.backend.put({ ...record, revoked: this.now().toISOString() });
  }

  /** Every record, without hashes. */
  async list(): Promise<Omit<KeyRecord, 'hash'>[]> {
    return (await this.backend.all()).map(({ hash: _hash, ...rest }) => rest);
  }

  private async active(key: string): Promise<KeyRecord> {
    if (!(await this.verify(key))) throw new KeyError(403, 'Forbidden - Invalid API Key');
    return (await this.backend.get(keyId(key)))!;
  }

  private async create(email: string): Promise<string> {
    for (;;) {
      const key = generateKey();
      if (await this.backend.get(keyId(key))) continue; // 48-bit id clash: draw again
      await this.backend.put({ id: keyId(key), hash: await sha256Hex(key), email, created: this.now().toISOString() });
      return key;
    }
  }
}

/** Backend in memory: for tests and for the edge function's cache layer. */
export class MemoryKeyBackend implements KeyBackend {
  readonly records = new Map<string, KeyRecord>();
  async get(id: string) {
    return this.records.get(id) ?? null;
  }
  async put(record: KeyRecord) {
    this.records.set(record.id, record);
  }
  async all() {
    return [...this.records.values()];
  }
}

/**
 * Remembers backend answers for `ttlMs` so that a remote store (Blobs) is not
 * asked on every request; a revoked key stops working within the TTL.
 */
export class CachedKeyBackend implements KeyBackend {
  private readonly cache = new Map<string, { record: KeyRecord | null; until: number }>();
  constructor(
    private readonly inner: KeyBackend,
    private readonly ttlMs = 30_000,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}
  async get(id: string) {
    const hit = this.cache.get(id);
    if (hit && hit.until > this.now()) return hit.record;
    const record = await this.inner.get(id);
    if (this.cache.size >= this.maxEntries) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(id, { record, until: this.now() + this.ttlMs });
    return record;
  }
  async put(record: KeyRecord) {
    this.cache.delete(record.id);
    await this.inner.put(record);
  }
  all() {
    return this.inner.all();
  }
}
