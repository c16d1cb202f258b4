/**
 * The secrets of the key service: API keys (`faa_`), sign-in tokens (`fat_`)
 * and portal sessions (`fas_`), each random with its own prefix so a log line
 * can be searched for them by shape (src/shared/redact.ts), and the sha256
 * that is all a store ever keeps of one. The same under Node, Deno and
 * workerd: Web Crypto's random bytes, a synchronous sha256 in plain code.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { KEY_ID_LENGTH, SECRET_PREFIXES } from '../shared/redact.ts';

export const KEY_PREFIX = SECRET_PREFIXES.key;
export const TOKEN_PREFIX = SECRET_PREFIXES.token;
export const SESSION_PREFIX = SECRET_PREFIXES.session;
/** A key's id (KEY_ID_LENGTH characters, shown by `keys list` and the portal) is never enough to use it. */
export { KEY_ID_LENGTH };
export const KEY_LENGTH = KEY_PREFIX.length + 32;
const KEY_SHAPE = /^faa_[A-Za-z0-9_-]{32}$/;
const TOKEN_SHAPE = /^fat_[A-Za-z0-9_-]{43}$/;
const SESSION_SHAPE = /^fas_[A-Za-z0-9_-]{43}$/;

function randomSecret(prefix: string, bytes: number): string {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  let binary = '';
  for (const b of raw) binary += String.fromCharCode(b);
  return prefix + btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

/** A new API key: 192 random bits, URL-safe. */
export const generateKey = () => randomSecret(KEY_PREFIX, 24);
/** A new sign-in token or session: 256 random bits each. */
export const generateToken = () => randomSecret(TOKEN_PREFIX, 32);
export const generateSession = () => randomSecret(SESSION_PREFIX, 32);

export const keyId = (key: string) => key.slice(0, KEY_ID_LENGTH);
export const isKeyShaped = (key: string) => key.length === KEY_LENGTH && KEY_SHAPE.test(key);

const encoder = new TextEncoder();
/** Lower-case hex sha256 of a secret, synchronous, the same under Node and Deno. */
export const hashSecret = (secret: string): string => bytesToHex(sha256(encoder.encode(secret)));
/**
 * What hashes a secret: `hashSecret`, or a runtime's own synchronous sha256
 * giving the same lower-case hex (the Worker's, adapters/_cloudflare/sha256.ts).
 */
export type SecretHash = (secret: string) => string;
/** Whether a text has the shape of a sign-in token, or of a session: checked before anything is hashed or asked. */
export const isTokenShaped = (token: unknown): token is string => typeof token === 'string' && TOKEN_SHAPE.test(token);
export const isSessionShaped = (session: unknown): session is string =>
  typeof session === 'string' && SESSION_SHAPE.test(session);

/** Remembers the hashes of keys asked about recently: hashing costs more than the rest of the check. */
export class HashMemo {
  private readonly memo = new Map<string, string>();
  private readonly max: number;
  private readonly hash: SecretHash;

  constructor(max = 20_000, hash: SecretHash = hashSecret) {
    this.max = max;
    this.hash = hash;
  }
  /** The hash of a key asked about recently, without hashing anything. */
  peek(key: string): string | undefined {
    return this.memo.get(key);
  }
  get(key: string): string {
    let hash = this.memo.get(key);
    if (hash === undefined) {
      hash = this.hash(key);
      if (this.memo.size >= this.max) this.memo.clear(); // a flood of new keys costs one rehash each, never memory
      this.memo.set(key, hash);
    }
    return hash;
  }
}
