/**
 * Keys for tests: many made at once and stored straight in SQLite, one never
 * issued, a log sink that watches for whole keys, and a key got through the portal.
 */
import type { NewKey } from '../../src/keys/contract.ts';
import { generateKey, hashSecret, keyId } from '../../src/keys/secrets.ts';
import { redactLine } from '../../src/shared/redact.ts';
import { SqliteKeyBackend } from '../../src/keys/stores/sqlite.node.ts';
import { tokenIn } from './mail.ts';

/** A whole key anywhere in a text: what no log line may hold. */
const WHOLE_KEY = /faa_[A-Za-z0-9_-]{32}/;

/** A stored key: a revoked one has `revokedAt`. */
export type KeyRecord = NewKey & { revokedAt?: number | null };

/** `count` fresh keys with their records, one address each (fast: no store involved). */
export function makeKeys(count: number, tag = 'k'): { keys: string[]; records: KeyRecord[] } {
  const keys: string[] = [];
  const records: KeyRecord[] = [];
  while (keys.length < count) {
    const key = generateKey();
    keys.push(key);
    records.push({ id: keyId(key), hash: hashSecret(key), email: `${tag}${keys.length}@example.org`, createdAt: 0 });
  }
  return { keys, records };
}

/** Puts records straight into a key store: an open backend, or a database file (opened and closed). */
export function storeKeys(target: SqliteKeyBackend | string, records: KeyRecord[]): void {
  const backend = typeof target === 'string' ? new SqliteKeyBackend(target, { view: false }) : target;
  backend.insertMany(records);
  if (typeof target === 'string') backend.close();
}

/** An in-memory SQLite key store holding `records`. */
export function memoryKeys(records: KeyRecord[]): SqliteKeyBackend {
  const backend = new SqliteKeyBackend(':memory:');
  storeKeys(backend, records);
  return backend;
}

/** A key of the right shape that was never issued. */
export const unissuedKey = () => generateKey();

/**
 * A log sink as the servers have one: lines are redacted where they are
 * written, then checked; any that still holds a whole key is remembered (as
 * written, so floods need no big array).
 */
export function keyWatchingLog(keep = 200) {
  const lines: string[] = [];
  const leaks: string[] = [];
  let count = 0;
  return {
    lines,
    leaks,
    get count() {
      return count;
    },
    log(raw: string) {
      const line = redactLine(raw);
      count++;
      if (WHOLE_KEY.test(line)) leaks.push(line);
      if (lines.length < keep) lines.push(line);
    },
  };
}

/**
 * A key had as a person has one: sign in at the portal, open the mailed
 * link, ask for a key; the session is kept for rotate and revoke.
 */
export async function keyThroughPortal(
  base: string,
  mailApi: { to(address: string): { body: { text?: string } }[] },
): Promise<{ key: string; session: string }> {
  const email = `portal-${Math.random().toString(36).slice(2)}@example.org`;
  const post = async (p: string, body?: object, session?: string) => {
    const headers: Record<string, string> = {
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...(session ? { authorization: `Bearer ${session}` } : {}),
    };
    const response = await fetch(`${base}${p}`, {
      method: 'POST',
      headers,
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: response.status, json: (await response.json()) as Record<string, string> };
  };
  const asked = await post('/portal/sign-in', { email });
  if (asked.status !== 202) throw new Error(`sign-in answered ${asked.status} ${JSON.stringify(asked.json)}`);
  const mail = mailApi.to(email)[0];
  if (!mail) throw new Error(`no sign-in mail reached ${email}`);
  const token = tokenIn({ text: mail.body.text ?? '' });
  const { session } = (await post('/portal/session', { token })).json;
  const issued = await post('/portal/keys', undefined, session);
  if (issued.status !== 201) throw new Error(`issue answered ${issued.status} ${JSON.stringify(issued.json)}`);
  return { key: issued.json.apiKey, session };
}
