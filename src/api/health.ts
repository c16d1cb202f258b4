/**
 * `GET /health`: whether this instance can read the archive, for load
 * balancers and uptime monitors. Asks for no key and answers no archive data:
 * only what the build recorded in the manifest (the source's revision: its
 * sha256, and its upstream commit and date when known; the archive's
 * counts). A manifest that is missing, corrupt or of another layout is a
 * 503, so a monitor sees the failure the lookups would answer 500 to.
 */
import type { DataSource } from './answer.ts';
import type { ArchiveReader } from './archive.ts';
import { type ApiReply, errorReply, jsonReply } from './reply.ts';
import { isPromise, type Maybe } from './maybe.ts';
import { MESSAGES } from '../messages.ts';
import type { HealthBody, Manifest } from '../types.ts';

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

/** 200 with the archive's revision and counts, or 503 when its manifest cannot be read. */
export function healthReply(archive: ArchiveReader, source: DataSource | undefined): Maybe<ApiReply> {
  if (!source) return unavailable();
  let manifest: Maybe<Manifest>;
  try {
    manifest = archive.manifest(source);
  } catch {
    return unavailable();
  }
  const ok = (m: Manifest) => jsonReply(200, healthBody(m), HEADERS);
  return isPromise(manifest) ? manifest.then(ok, unavailable) : ok(manifest);
}
