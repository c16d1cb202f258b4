/**
 * Where `npm start` and `npm run keys` find their files: the environment's
 * KEYS_DB and DIST_DIR, or the checkout's defaults, so both always work on
 * the same key database.
 */
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');
/** The SQLite key database (KEYS_DB, default data/keys.db). */
export const KEYS_DB = path.resolve(process.env.KEYS_DB || path.join(ROOT, 'data/keys.db'));
/** The built output served (DIST_DIR, default dist/). */
export const DIST = path.resolve(process.env.DIST_DIR || path.join(ROOT, 'dist'));
