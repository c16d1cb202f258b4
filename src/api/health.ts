/**
 * `GET /health`: whether this instance can read the archive, for load
 * balancers and uptime monitors. Asks for no key and answers no archive data:
 * only what the build recorded in the manifest (the source's revision: its
 * sha256, and its upstream commit and date when known; the archive's
 * counts). A manifest that is missing, corrupt or of another layout is a
 * 503, so a monitor sees the failure the lookups would answer 500 to; so is
 * a key store that cannot answer key checks (unreadable, damaged,
 * unreachable: every keyed request would fail), found by the store's own
 * cheap probe (`KeyCheck.probe`, reused for a second). The 503 says which of
 * the two in one fixed line: never the store's error, which may name a
 * place or an access it should not show.
 */
import type { DataSource } from '../store/answer.ts';
import type { ArchiveReader } from '../store/archive.ts';
import type { KeyCheck } from '../keys/contract.ts';
import { type ApiReply, errorReply, jsonReply } from '../http/reply.ts';
import { isPromise, type Maybe } from '../shared/maybe.ts';
import { MESSAGES } from '../shared/messages.ts';
import type { HealthBody, Manifest } from '../shared/types.ts';

/** A health check is never cached: it says how this instance is now. */
const HEADERS = { 'cache-control': 'no-store' };

export function healthBody(manifest: Manifest): HealthBody {
  const { source, yearRange } = manifest;
  const pinned = source.revision;
  return {
    status: 'ok',
    archive: {
      revision: source.sha256,
      ...(pinned?.commit ? { commit: pinned.commit } : {}),
      ...(pinned?.date ? { date: pinned.date } : {}),
      sample: source.sample,
      firstYear: yearRange[0],
      lastYear: yearRange[1],
      years: Object.keys(manifest.years).length,
      categories: manifest.categoryCount,
      nominations: source.rows,
    },
  };
}

const unavailable = () => errorReply(503, MESSAGES.unavailable);
const keysUnavailable = () => errorReply(503, MESSAGES.keysUnavailable);

/**
 * 200 with the archive's revision and counts, or 503 when its manifest cannot be read or the key store cannot answer.
 */
export function healthReply(archive: ArchiveReader, source: DataSource | undefined, keys?: KeyCheck): Maybe<ApiReply> {
  if (!source) return unavailable();
  let manifest: Maybe<Manifest>;
  try {
    manifest = archive.manifest(source);
  } catch {
    return unavailable();
  }
  const ok = (m: Manifest) => withKeys(keys, () => jsonReply(200, healthBody(m), HEADERS));
  return isPromise(manifest) ? manifest.then(ok, unavailable) : ok(manifest);
}

/** `healthy()` when the key store answers its probe (or has none), else the key store's 503. */
function withKeys(keys: KeyCheck | undefined, healthy: () => ApiReply): Maybe<ApiReply> {
  let probed: Maybe<void>;
  try {
    probed = keys?.probe?.();
  } catch {
    return keysUnavailable();
  }
  return isPromise(probed) ? probed.then(healthy, keysUnavailable) : healthy();
}
