/**
 * npm run --silent keys -- issue <email> | rotate <key> | revoke <key> | list
 *
 * Works on the SQLite key database `npm start` uses (KEYS_DB, default
 * data/keys.db), safely while the server runs: each command is one
 * transaction, and the server sees it within a second. `issue` and `rotate`
 * print the new key alone on stdout; everything else goes to stderr. Exit
 * codes: 0 done, 1 refused (the line says why), 2 usage, 75 when another
 * process held the database longer than it waits (run it again).
 */
import path from 'node:path';
import { readCommandLine } from './command-line.ts';
import { KeyError, keyId, Keys, printable } from '../src/keys.ts';
import { purgeHook, purgeKey } from '../src/api/cache.ts';
import { LegacyKeysError } from '../src/server/legacy-keys.node.ts';
import { KeyDatabaseBusy, KeyDatabaseError, SqliteKeyBackend } from '../src/server/sqlite-keys.node.ts';
import { KEYS_DB } from './paths.ts';

const USAGE = 'usage: npm run --silent keys -- issue <email> | rotate <key> | revoke <key> | list';
const HELP = `${USAGE}

Works on the key database npm start uses (KEYS_DB, default data/keys.db), safely
while the server runs: each command is one transaction, seen by the server
within a second. issue and rotate print the new key alone on stdout.

  issue <email>   a key for an address that has none
  rotate <key>    a replacement; the old key is refused at once
  revoke <key>    the key is refused from now on
  list            ids, e-mails, dates and state of every key
  -h, --help      this text`;

type Print = (line: string) => void;

const COMMANDS: Record<string, string | null> = { issue: 'an e-mail address', rotate: 'a key', revoke: 'a key', list: null };

/** What was wrong with the words given, in one line: an unknown command named as typed, or what a known one takes. */
function usageMistake(command: string | undefined, arg: string | undefined, extra: number): string {
  if (command === undefined) return 'keys: name a command';
  if (!Object.hasOwn(COMMANDS, command)) return `keys: unknown command ${JSON.stringify(printable(command))}`;
  const wants = COMMANDS[command];
  if (wants === null) return `keys: ${command} takes nothing after it`;
  return arg === undefined ? `keys: ${command} needs ${wants}` : `keys: ${command} takes ${wants} and nothing more (${extra} more given)`;
}

async function run(keys: Keys, argv: string[], out: Print, err: Print): Promise<number> {
  const [command, arg, ...rest] = argv;
  const one = arg !== undefined && rest.length === 0;
  if (command === 'issue' && one) out(await keys.issue(arg));
  else if (command === 'rotate' && one) {
    out(await keys.rotateKey(arg.trim()));
    await purgeCached(arg.trim(), err);
  } else if (command === 'revoke' && one) {
    await keys.revokeKey(arg.trim());
    err('revoked');
    await purgeCached(arg.trim(), err);
  } else if (command === 'list' && arg === undefined) {
    // Stored text is printed escaped: an address with ESC c in it must not reset the terminal that lists it.
    for await (const r of keys.list()) out(`${printable(r.id)}…\t${printable(r.email)}\t${r.createdAt}\t${r.revokedAt ? `revoked ${r.revokedAt}` : 'active'}`);
  } else {
    err(`${usageMistake(command, arg, rest.length)}\n${USAGE}`);
    return 2;
  }
  return 0;
}

/** With a shared cache in front (CACHE_PURGE_URL), the key's cached answers are purged: now and once the server's key cache has seen the change. */
async function purgeCached(key: string, err: Print): Promise<void> {
  const url = process.env.CACHE_PURGE_URL;
  if (url) await purgeKey(purgeHook(url), keyId(key), (line) => err(`keys: ${line}`));
}

/** sysexits' EX_TEMPFAIL: another process held the database; the same command may simply be run again. */
export const EXIT_BUSY = 75;

/** The exit code and line for a refusal the user can act on; anything else is a fault and thrown. */
function refusal(error: unknown, err: Print): number {
  if (!(error instanceof KeyDatabaseError || error instanceof LegacyKeysError || error instanceof KeyError)) throw error;
  err(`keys: ${error.message}`);
  return error instanceof KeyDatabaseBusy ? EXIT_BUSY : 1;
}

/** Runs one command on the database `file`; the exit code (0 done, 1 refused, 2 usage, 75 busy: try again). */
export async function keysCli(argv: string[], file: string, out: Print = console.log, err: Print = console.error): Promise<number> {
  // --help and a mistyped option are answered before the database is opened.
  const line = readCommandLine({ name: 'keys', usage: HELP, options: {}, positionals: 2 }, argv);
  if ('exit' in line) {
    (line.exit === 0 ? out : err)(line.text);
    return line.exit;
  }
  let backend: SqliteKeyBackend;
  try {
    // The CLI checks single keys: it asks the file and keeps no view of every key.
    backend = new SqliteKeyBackend(file, { view: false, legacyJson: path.join(path.dirname(file), 'keys.json') });
  } catch (error) {
    return refusal(error, err);
  }
  try {
    return await run(new Keys(backend), argv, out, err);
  } catch (error) {
    return refusal(error, err);
  } finally {
    backend.close();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  process.exitCode = await keysCli(process.argv.slice(2), KEYS_DB);
}
