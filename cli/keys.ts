/**
 * npm run --silent keys -- issue <email> | rotate <key> [--grace now|1h|24h|7d]
 *                        | revoke <key> | end-grace <email> | list
 *                        | migrate-to-postgres (KEYS_DB into DATABASE_URL, cli/lib/keys-move.ts)
 *
 * Works on the key database `npm start` uses (DATABASE_URL's PostgreSQL, or
 * the SQLite file KEYS_DB, default data/keys.db), safely while the server runs: each command is one
 * transaction, and the server sees it within a second. `issue` and `rotate`
 * print the new key alone on stdout; everything else goes to stderr. Exit
 * codes: 0 done, 1 refused (the line says why), 2 usage (or a malformed
 * CACHE_PURGE_URL), 69 done but the shared cache's purge gave up (the key
 * stays stopped; the server purges it too once it sees the change), 75 when
 * another process held the database longer than it waits, or PostgreSQL could not be
 * reached (run it again).
 */
import path from 'node:path';
import { readCommandLine } from '../lib/command-line.ts';
import { printable } from '../src/keys/address.ts';
import { KeyError, KeyStoreUnavailable } from '../src/keys/contract.ts';
import { GRACE_PERIODS, graceOf, Keys } from '../src/keys/rules.ts';
import { type Purge, purgeKeys } from '../src/http/cache.ts';
import { purgeHook, purgeUrlSetting } from '../adapters/_node/varnish.ts';
import { LegacyKeysError } from '../src/keys/stores/legacy.node.ts';
import { KeyDatabaseBusy, KeyDatabaseError } from '../src/keys/stores/sqlite-file.node.ts';
import { type NodeKeyStore, openKeyStore } from '../adapters/_node/key-store.ts';
import { KeyDatabaseUnreachable } from '../adapters/_node/postgres-keys.ts';
import { KEYS_DB } from './lib/paths.ts';
import { migrateToPostgres } from './lib/keys-move.ts';

const GRACE_NAMES = Object.keys(GRACE_PERIODS).join(', ');
const USAGE =
  'usage: npm run --silent keys -- issue <email> | rotate <key> [--grace now|1h|24h|7d] | revoke <key> | end-grace <email> | list | migrate-to-postgres';
const HELP = `${USAGE}

Works on the key database npm start uses (PostgreSQL when DATABASE_URL is set,
else KEYS_DB, default data/keys.db), safely while the server runs: each command is one transaction, seen by the server
within a second. issue and rotate print the new key alone on stdout.

  issue <email>      a key for an address that has none
  rotate <key>       a replacement for the current key <key>; the old key is
                     refused at once, or after its grace period:
    --grace <time>   how long the old key goes on working: ${GRACE_NAMES}
                     (default now; keep now for a key that leaked). Both keys
                     work meanwhile; the old one stops on its own at the end.
                     Rotating again while one is in grace stops that one now.
  revoke <key>       the key is refused from now on: the current key (and the
                     old one in its grace period with it), or the old key alone
  end-grace <email>  stops the address's old key in its grace period now
  list               id, e-mail, date and state of every key: current,
                     ending <time> (in its grace period) or revoked <time>
  migrate-to-postgres
                     moves the SQLite file KEYS_DB (keys, tokens, sessions)
                     into the empty PostgreSQL database DATABASE_URL, in one
                     transaction; the file is left as it is
  -h, --help         this text`;

type Print = (line: string) => void;

const COMMANDS: Record<string, string | null> = {
  issue: 'an e-mail address',
  rotate: 'a key',
  revoke: 'a key',
  'end-grace': 'an e-mail address',
  list: null,
  'migrate-to-postgres': null,
};

/** What was wrong with the words given, in one line: an unknown command named as typed, or what a known one takes. */
function usageMistake(command: string | undefined, arg: string | undefined, extra: number): string {
  if (command === undefined) return 'keys: name a command';
  if (!Object.hasOwn(COMMANDS, command)) return `keys: unknown command ${JSON.stringify(printable(command))}`;
  const wants = COMMANDS[command];
  if (wants === null) return `keys: ${command} takes nothing after it`;
  return arg === undefined
    ? `keys: ${command} needs ${wants}`
    : `keys: ${command} takes ${wants} and nothing more (${extra} more given)`;
}

/** A key's state as `list` prints it. */
function stateOf(state: string | undefined, revokedAt: string | null): string {
  if (state === 'current' || revokedAt === null) return 'current';
  return `${state === 'ending' ? 'ending' : 'revoked'} ${revokedAt}`;
}

async function run(
  keys: Keys,
  argv: string[],
  graceMs: number | undefined,
  purge: Purge | undefined,
  out: Print,
  err: Print,
): Promise<number> {
  const [command, arg, ...rest] = argv;
  const one = arg !== undefined && rest.length === 0;
  if (graceMs !== undefined && command !== 'rotate') {
    err(`keys: --grace is for rotate only\n${USAGE}`);
    return 2;
  }
  if (command === 'issue' && one) out(await keys.issue(arg));
  else if (command === 'rotate' && one) {
    const { key, stopped } = await keys.rotateKey(arg.trim(), graceMs ?? 0);
    out(key);
    if (graceMs)
      err(
        `the old key works until ${new Date(Date.now() + graceMs).toISOString()}; stop it sooner with: keys -- revoke <old key>`,
      );
    if (stopped.length > 1) err('the key in its grace period from an earlier rotation stopped now');
    // Every key it stopped is purged, the old one even in its grace period: answers kept before would outlive its end.
    return purgeCached(purge, stopped, err);
  } else if (command === 'revoke' && one) {
    // Revoking the current key stops its address's key in grace too: both keys' cached answers go.
    const stopped = await keys.revokeKey(arg.trim());
    err(stopped.length > 1 ? 'revoked, and the old key in its grace period with it' : 'revoked');
    return purgeCached(purge, stopped, err);
  } else if (command === 'end-grace' && one) {
    const stopped = await keys.endGrace(arg);
    err('the old key stopped');
    return purgeCached(purge, stopped, err);
  } else if (command === 'list' && arg === undefined) {
    // Stored text is printed escaped: an address with ESC c in it must not reset the terminal that lists it.
    for await (const r of keys.list())
      out(`${printable(r.id)}…\t${printable(r.email)}\t${r.createdAt}\t${stateOf(r.state, r.revokedAt)}`);
  } else {
    err(`${usageMistake(command, arg, rest.length)}\n${USAGE}`);
    return 2;
  }
  return 0;
}

/** sysexits' EX_UNAVAILABLE: the command was done, but the shared cache could not be told. */
export const EXIT_PURGE_FAILED = 69;

/**
 * With a shared cache in front (CACHE_PURGE_URL), the stopped keys' cached
 * answers are purged: now and once the server's key cache has seen the
 * change. The exit code: 0, or EXIT_PURGE_FAILED (said in a line) when the
 * purge gave up. Without the hook the server, which sees the change within
 * 250 ms, purges them (when it has one).
 */
async function purgeCached(purge: Purge | undefined, ids: string[], err: Print): Promise<number> {
  if (!purge || (await purgeKeys(purge, ids, (line) => err(`keys: warning: ${line}`)))) return 0;
  err(
    `keys: done, and the key stays stopped, but the shared cache's purge gave up: a running server with CACHE_PURGE_URL purges it too; else purge ${ids.map((id) => `key-${id}`).join(' ')} by hand`,
  );
  return EXIT_PURGE_FAILED;
}

/** sysexits' EX_TEMPFAIL: another process held the database; the same command may simply be run again. */
export const EXIT_BUSY = 75;

/** The exit code and line for a refusal the user can act on; anything else is a fault and thrown. */
function refusal(error: unknown, err: Print): number {
  if (!(
    error instanceof KeyDatabaseError ||
    error instanceof LegacyKeysError ||
    error instanceof KeyError ||
    error instanceof KeyStoreUnavailable
  ))
    throw error;
  err(`keys: ${error.message}`);
  // Busy, or a PostgreSQL database out of reach: nothing is wrong with the command, and it may simply be run again.
  return error instanceof KeyDatabaseBusy ||
    error instanceof KeyStoreUnavailable ||
    error instanceof KeyDatabaseUnreachable
    ? EXIT_BUSY
    : 1;
}

/**
 * Runs one command on the database `file` (or DATABASE_URL's, when `env`
 * has one); the exit code (0 done, 1 refused, 2 usage, 75 busy: try again).
 */
export async function keysCli(
  argv: string[],
  file: string,
  out: Print = console.log,
  err: Print = console.error,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  // --help and a mistyped option are answered before the database is opened.
  const line = readCommandLine(
    { name: 'keys', usage: HELP, options: { grace: { type: 'string' } }, positionals: 2 },
    argv,
  );
  if ('exit' in line) {
    (line.exit === 0 ? out : err)(line.text);
    return line.exit;
  }
  const graceText = line.values.grace;
  const graceMs = graceText === undefined ? undefined : graceOf(graceText);
  if (graceMs === null) {
    err(`keys: --grace takes ${GRACE_NAMES} (or 0), not ${JSON.stringify(printable(String(graceText)))}\n${USAGE}`);
    return 2;
  }
  let purge: Purge | undefined;
  try {
    purge = env.CACHE_PURGE_URL ? purgeHook(purgeUrlSetting(env.CACHE_PURGE_URL)) : undefined;
  } catch (error) {
    err(`keys: ${(error as Error).message}`);
    return 2;
  }
  if (line.positionals[0] === 'migrate-to-postgres' && line.positionals.length === 1 && graceMs === undefined) {
    try {
      return await migrateToPostgres(file, env.DATABASE_URL, out, err);
    } catch (error) {
      return refusal(error, err);
    }
  }
  let store: NodeKeyStore;
  try {
    // The CLI checks single keys: it asks the database and keeps no view of every key.
    store = await openKeyStore(env, {
      keysDb: file,
      legacyJson: path.join(path.dirname(file), 'keys.json'),
      server: false,
    });
  } catch (error) {
    if (error instanceof RangeError) {
      err(`keys: ${error.message}`);
      return 2;
    }
    return refusal(error, err);
  }
  try {
    return await run(store.keys, line.positionals, graceMs, purge, out, err);
  } catch (error) {
    return refusal(error, err);
  } finally {
    await store.close();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  process.exitCode = await keysCli(process.argv.slice(2), KEYS_DB);
}
