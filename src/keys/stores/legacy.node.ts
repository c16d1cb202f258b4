/**
 * The JSON key file of earlier versions (`data/keys.json`: `{"keys": [{id,
 * hash, email, created, revoked?}]}`), read once so the SQLite store can
 * import it. A file that does not parse, or a record that is not a key
 * record, stops the import with the place and the reason: a typo must never
 * read as "no keys".
 */
import type { NewKey } from '../contract.ts';

/** The `meta` row that records the import, so it never runs twice. */
export const LEGACY_IMPORT = 'legacy-json-import';

export interface LegacyImport {
  file: string;
  /** Records read from the file. */
  keys: number;
  /** Active records stored revoked, because their address already had a newer active key. */
  revoked: number;
  /** ISO time of the import. */
  at: string;
}

export type LegacyRecord = NewKey & { revokedAt: number | null };

export class LegacyKeysError extends Error {}

function fail(file: string, reason: string): never {
  throw new LegacyKeysError(
    `Cannot import the old key file ${file}: ${reason}. Expected {"keys": [{"id", "hash", "email", "created", "revoked"?}]}; ` +
      'nothing was imported and the file was left as it is. Fix it, or move it away to start without it.',
  );
}

const time = (value: unknown): number | null =>
  typeof value === 'string' && Number.isFinite(Date.parse(value)) ? Date.parse(value) : null;

function record(file: string, value: unknown, index: number): LegacyRecord {
  const r = value as Record<string, unknown>;
  const where = `record ${index + 1}`;
  if (typeof r !== 'object' || r === null) fail(file, `${where} is not an object`);
  if (typeof r.id !== 'string' || !/^faa_[A-Za-z0-9_-]{8}$/.test(r.id))
    fail(file, `${where} has no key id like faa_xxxxxxxx`);
  if (typeof r.hash !== 'string' || !/^[0-9a-f]{64}$/.test(r.hash)) fail(file, `${where} has no sha256 hash`);
  if (typeof r.email !== 'string' || r.email === '') fail(file, `${where} has no email`);
  const created = time(r.created);
  if (created === null) fail(file, `${where} has no ISO creation time`);
  const revoked = r.revoked === undefined || r.revoked === null ? null : time(r.revoked);
  if (revoked === null && r.revoked != null) fail(file, `${where} has a revocation time that is not an ISO time`);
  return { id: r.id, hash: r.hash, email: r.email.toLowerCase(), createdAt: created, revokedAt: revoked };
}

/** The records of a legacy key file; throws `LegacyKeysError` for anything else. */
export function importLegacyJson(file: string, bytes: Uint8Array): LegacyRecord[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (error) {
    fail(file, `it is not valid JSON (${(error as Error).message})`);
  }
  const keys = (parsed as { keys?: unknown })?.keys;
  if (!Array.isArray(keys)) fail(file, 'it has no "keys" array');
  return keys.map((value, index) => record(file, value, index));
}
