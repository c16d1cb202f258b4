/**
 * The Node server's side of a shared cache in front (CACHE_PURGE_URL): it
 * notices which build it serves and purges the answers of any other.
 */
import type http from 'node:http';
import { ALL_TAG, type Purge, purgeHook, purgeKey, purgeTags, revisionTag, VARNISH_CACHE } from '../../src/http/cache.ts';
import type { Maybe } from '../../src/shared/maybe.ts';
import type { Manifest } from '../../src/shared/types.ts';
import type { DiskData } from './disk-data.ts';

/** The server's shared cache through the purge hook at `url` (Varnish's headers); lines go to `log`, else stderr. */
export function hookCache(url: string, log: ((line: string) => void) | undefined) {
  const purge = purgeHook(url);
  const say = (line: string) => (log ?? console.error)(line);
  // A purge's second round (after key caches settle) runs after the portal's reply: the process outlives it.
  return { purge, log: say, sharedCache: VARNISH_CACHE, purgeKey: (id: string) => purgeKey(purge, id, say, () => {}) };
}

/**
 * A cache in front keeps answers until purged, and a hit never reaches this
 * server: so the served build is checked every second, and the answers of a
 * build no longer served are purged (all of them on start, which may follow
 * a rebuild; the old revision's when the disk changes under a running server,
 * twice, for answers made while it changed).
 */
export function watchRevision(server: http.Server, manifest: (data: DiskData) => Maybe<Manifest>, data: DiskData, purge: Purge, log: (line: string) => void) {
  let served: string | undefined;
  let again: string | undefined;
  const check = async () => {
    let tag: string;
    try {
      tag = revisionTag(await manifest(data));
    } catch {
      return; // no readable build: nothing new is answered from it either
    }
    if (again) void purgeTags(purge, [again], `revision ${again}`, log);
    again = undefined;
    if (served === tag) return;
    const old = served;
    served = tag;
    again = old;
    void purgeTags(purge, [old ?? ALL_TAG], old ? `revision ${old}` : 'a start', log);
  };
  void check();
  const timer = setInterval(() => void check(), 1_000);
  timer.unref();
  server.once('close', () => clearInterval(timer));
}
