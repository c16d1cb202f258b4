/**
 * Where `npm start` and `npm run keys` keep keys: PostgreSQL when
 * DATABASE_URL names it (several servers on one set of keys), else the
 * SQLite file KEYS_DB (one host). Both open the same way and close the same
 * way, and say where keys live without a password.
 */
import type { KeyBackend } from '../../src/keys/contract.ts';
import { Keys } from '../../src/keys/rules.ts';
import type { LegacyImport } from '../../src/keys/stores/legacy.node.ts';
import {
  isPostgresUrl,
  POSTGRES_DEFAULTS,
  PostgresKeyBackend,
  type PostgresKeysOptions,
  postgresKeys,
  shownDatabaseUrl,
} from './postgres-keys.ts';
import { SqliteKeyBackend } from '../../src/keys/stores/sqlite.node.ts';
import { wholeNumberSetting } from '../../src/shared/limits.ts';

export interface NodeKeyStore {
  keys: Keys;
  backend: KeyBackend;
  /** Where keys live, as a start-up line says it (never a password). */
  where: string;
  /** What was imported from a legacy JSON key file on open (SQLite only). */
  imported: LegacyImport | null;
  /** How many current keys there are. */
  activeCount(): Promise<number>;
  close(): Promise<void>;
}

/**
 * DATABASE_URL and the pool's settings, checked: null without DATABASE_URL
 * (SQLite); a RangeError in one line for a URL that is not PostgreSQL's or a
 * setting out of its range.
 */
export function postgresSettings(env: NodeJS.ProcessEnv): (PostgresKeysOptions & { url: string }) | null {
  const url = env.DATABASE_URL?.trim();
  if (!url) return null;
  if (!isPostgresUrl(url))
    throw new RangeError(
      `DATABASE_URL must be a postgres:// or postgresql:// URL, such as postgres://faa@127.0.0.1:5432/faa; got ${shownDatabaseUrl(url)}`,
    );
  return {
    url,
    poolMax: wholeNumberSetting('POSTGRES_POOL_MAX', env.POSTGRES_POOL_MAX, POSTGRES_DEFAULTS.poolMax, 1, 100),
    connectTimeoutMs: wholeNumberSetting(
      'POSTGRES_CONNECT_TIMEOUT_MS',
      env.POSTGRES_CONNECT_TIMEOUT_MS,
      POSTGRES_DEFAULTS.connectTimeoutMs,
      100,
      60_000,
    ),
    queryTimeoutMs: wholeNumberSetting(
      'POSTGRES_QUERY_TIMEOUT_MS',
      env.POSTGRES_QUERY_TIMEOUT_MS,
      POSTGRES_DEFAULTS.queryTimeoutMs,
      100,
      60_000,
    ),
  };
}

export interface OpenOptions {
  /** The SQLite key database, used without DATABASE_URL. */
  keysDb: string;
  /** A legacy JSON key file to import into SQLite once. */
  legacyJson?: string;
  /**
   * The server (true): keys checked from memory, other processes'
   * changes followed. The CLI (false) asks the database each time.
   */
  server: boolean;
  /**
   * Told of damage found once serving (SQLite, an error), and of
   * the database lost (an error) and back (info) (PostgreSQL).
   */
  log?: (line: string, level: 'error' | 'info') => void;
}

/**
 * Opens the key store the environment names; rejects with the
 * store's one-line error (`KeyDatabaseError`) when it cannot.
 */
export async function openKeyStore(env: NodeJS.ProcessEnv, options: OpenOptions): Promise<NodeKeyStore> {
  const postgres = postgresSettings(env);
  if (postgres) {
    // Whether this process purges the shared cache for its own writes: else its notifications ask one server to.
    const purges = !!env.CACHE_PURGE_URL;
    const backend = await PostgresKeyBackend.open(postgres.url, {
      ...postgres,
      listen: options.server,
      log: options.log,
      purges,
    });
    return {
      // The server keeps answers for a second, dropped at once when
      // another server changes a key; the CLI reads each time.
      keys: options.server ? postgresKeys(backend) : new Keys(backend),
      backend,
      where: `PostgreSQL ${shownDatabaseUrl(postgres.url)}`,
      imported: null,
      activeCount: () => backend.activeCount(),
      close: () => backend.close(),
    };
  }
  const log = options.log;
  const backend = new SqliteKeyBackend(options.keysDb, {
    view: options.server,
    legacyJson: options.legacyJson,
    onDamage: log && ((line) => log(line, 'error')),
  });
  return {
    keys: new Keys(backend),
    backend,
    where: options.keysDb,
    imported: backend.imported,
    activeCount: async () => backend.activeCount(),
    close: async () => backend.close(),
  };
}
