/**
 * The Node server's side of a shared cache in front (CACHE_PURGE_URL): it
 * notices which build it serves and purges the answers of any other, and
 * purges the answers of keys stopped in its key database.
 */
import type http from 'node:http';
import { ALL_TAG, type Purge, purgeKeys, purgeTags, revisionTag } from '../../src/http/cache.ts';
import { purgeHook, varnishHeaders } from './varnish.ts';
import type { Maybe } from '../../src/shared/maybe.ts';
import type { Manifest } from '../../src/shared/types.ts';
import type { DiskData } from './disk-data.ts';
import type { KeyBackend } from '../../src/keys/contract.ts';
import { SqliteKeyBackend } from '../../src/keys/stores/sqlite.node.ts';
import { PostgresKeyBackend } from './postgres-keys.ts';

/**
 * The server's shared cache through the purge hook at `url` (Varnish's
 * headers); a failed purge is a warning for `warn`, else stderr. Over the
 * SQLite store, a key another process (the keys CLI) stops is purged too,
 * whether or not that process could purge: the store sees it within 250 ms.
 * Over PostgreSQL, only one the CLI could not purge, by one server alone.
 */
export function hookCache(url: string, warn: ((line: string) => void) | undefined, backend?: KeyBackend) {
  const purge = purgeHook(url);
  const say = (line: string) => (warn ?? console.error)(line);
  // A purge's second round (after key caches settle) runs after the portal's reply: the process outlives it.
  const purgeStopped = (ids: string[]) => purgeKeys(purge, ids, say, () => {});
  if (backend instanceof SqliteKeyBackend) backend.onStopped((ids) => void purgeStopped(ids));
  // Over PostgreSQL each writer purges its own changes; one it could not purge
  // (the CLI without the hook) is purged by the one server that claims it.
  if (backend instanceof PostgresKeyBackend) backend.onUnpurged((ids) => void purgeStopped(ids));
  return { purge, log: say, sharedCache: varnishHeaders, purgeKeys: purgeStopped };
}

/**
 * A cache in front keeps answers until purged, and a hit never reaches this
 * server: so the served build is checked every second, and the answers of a
 * build no longer served are purged (all of them on start, which may follow
 * a rebuild; the old revision's when the disk changes under a running server,
 * twice, for answers made while it changed).
 */
export function watchRevision(
  server: http.Server,
  manifest: (data: DiskData) => Maybe<Manifest>,
  data: DiskData,
  purge: Purge,
  log: (line: string) => void,
) {
  let served: string | undefined;
  let again: string | undefined;
  const check = async () => {
    let tag: string;
    try {
      tag = await revisionTag(await manifest(data));
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
