/**
 * npm start: builds dist/ if it is missing or stale (build/prepare-dist.ts:
 * never over a full archive from the sample, never because keys changed),
 * says which archive it serves, makes a development key on first start, then
 * serves on 127.0.0.1:PORT (default 8888).
 *
 * Production mode (NODE_ENV=production, or --production): no development
 * key (one an earlier start left is revoked) and no mail outbox; without a mail transport the portal's sign-in
 * answers 503 saying so, and the start-up lines say where keys and mail go.
 *
 * Environment: PORT, HOST, ARCHIVE_SOURCE, DIST_DIR, RATE_LIMIT_PER_MINUTE,
 * LOG_REQUESTS (0 to silence the access log); for keys KEYS_DB (default
 * data/keys.db) or DATABASE_URL (PostgreSQL, with POSTGRES_POOL_MAX,
 * POSTGRES_CONNECT_TIMEOUT_MS, POSTGRES_QUERY_TIMEOUT_MS), MAIL_API_URL with MAIL_API_TOKEN or SMTP_URL, and MAIL_FROM
 * (without either, mails go to the console and data/mail/), PUBLIC_BASE_URL
 * (where mailed links point), PORTAL_ISSUE_LIMIT_PER_MINUTE; CACHE_PURGE_URL
 * (a shared cache in front), TRUSTED_PROXIES (proxies whose X-Forwarded-For
 * names the client, for the portal's limits; default none).
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { commandLine, type Refuse, refuser } from '../lib/command-line.ts';
import { examplePath, ROUTES } from '../src/shared/routes.ts';
import { currentDist } from './lib/dist.ts';
import { DIST, KEYS_DB, ROOT } from './lib/paths.ts';
import { Keys } from '../src/keys/rules.ts';
import { keyId } from '../src/keys/secrets.ts';
import { DEFAULT_RATE_LIMIT_PER_MINUTE, wholeNumberSetting } from '../src/shared/limits.ts';
import { issueLimitFrom } from '../src/portal/portal.ts';
import { purgeUrlSetting } from '../adapters/_node/varnish.ts';
import { trustedProxiesFrom } from '../adapters/_node/client-address.ts';
import { createLog, type Log } from '../adapters/_node/log.ts';
import { type Mailer, noTransport } from '../src/portal/mail.ts';
import { nodeMailer } from '../adapters/_node/mail.ts';
import { createNodeServer } from '../adapters/node.ts';
import { KeyDatabaseBusy, KeyDatabaseError } from '../src/keys/stores/sqlite-file.node.ts';
import { LegacyKeysError } from '../src/keys/stores/legacy.node.ts';
import { type NodeKeyStore, openKeyStore, postgresSettings } from '../adapters/_node/key-store.ts';

const KEYS_DIR = path.dirname(KEYS_DB);
const DEV_KEY_FILE = path.join(KEYS_DIR, 'dev-key.txt');
const DEV_ADDRESS = 'dev@localhost.localdomain';
/** Longest a stop (SIGTERM, SIGINT) takes, whatever requests in flight or the log's destination do. */
const STOP_MS = 4500;

const refuse: Refuse = refuser('npm start');

/** Refuses with the key database's own words: busy exits 75 (try again), anything else 1; other errors are faults. */
function refuseKeys(error: unknown): never {
  if (!(error instanceof KeyDatabaseError || error instanceof LegacyKeysError)) throw error;
  refuse(error.message, error instanceof KeyDatabaseBusy ? 75 : 1);
}

/**
 * The key store (PostgreSQL when DATABASE_URL names it, else KEYS_DB), or a
 * one-line reason to stop: a database or old key file it cannot read is never
 * touched, and a database it cannot reach stops the start.
 */
async function openKeys(log: Log): Promise<NodeKeyStore> {
  try {
    // Damage found once serving, or the database lost and back, is logged
    // as an error; the server goes on (what needs the store answers 503).
    const say = (line: string, level: 'error' | 'info') => (level === 'info' ? log(line) : log.error(line));
    return await openKeyStore(process.env, {
      keysDb: KEYS_DB,
      legacyJson: path.join(KEYS_DIR, 'keys.json'),
      server: true,
      log: say,
    });
  } catch (error) {
    refuseKeys(error);
  }
}

/** A development key on first start, kept (git-ignored) so later starts can show examples; never printed whole. */
async function devKey(keys: Keys, store: NodeKeyStore): Promise<string> {
  const kept = await readFile(DEV_KEY_FILE, 'utf8').then(
    (k) => k.trim(),
    () => '',
  );
  if (kept && (await keys.verify(kept)) === true) return kept;
  // A server with keys of its own and no development key (self-hosted) gets none.
  if (!kept && (await store.activeCount()) > 0) return '';
  const key = (await keys.activeKey(DEV_ADDRESS))
    ? (await keys.rotate(DEV_ADDRESS)).key
    : await keys.issue(DEV_ADDRESS);
  await writeFile(DEV_KEY_FILE, `${key}\n`, { mode: 0o600 });
  console.log(`made a development key (kept in ${path.relative(ROOT, DEV_KEY_FILE) || DEV_KEY_FILE}, git-ignored)`);
  return key;
}

/**
 * Production mode refuses the development key: one an earlier development
 * start left in the database (its address is ours alone) is revoked, with its
 * key in grace if any, and the start says so once; null when there was none.
 */
async function revokeDevKey(keys: Keys): Promise<string | null> {
  const [current, ending] = await Promise.all([keys.activeKey(DEV_ADDRESS), keys.endingKey(DEV_ADDRESS)]);
  if (!current && !ending) return null;
  await (current ? keys.revoke(DEV_ADDRESS) : keys.endGrace(DEV_ADDRESS));
  const ids = [current?.id, ending?.id]
    .filter(Boolean)
    .map((id) => `${id}…`)
    .join(' and ');
  return `production mode: revoked the development key ${ids} (${DEV_ADDRESS}) an earlier development start made; it is refused from now on`;
}

/** Without a transport in production: sign-in answers 503 (src/portal/portal.ts), and the start-up line says why. */
const NO_MAIL: Mailer = {
  send: noTransport,
  describe: 'none (production mode, no MAIL_API_URL or SMTP_URL): sign-in answers 503 until one is set',
  close: () => {},
};

/**
 * CACHE_PURGE_URL, checked: a malformed one stops npm start
 * with one line (exit 2, as a usage error), naming no password.
 */
function purgeUrl(value: string | undefined): string | undefined {
  try {
    return value ? purgeUrlSetting(value) : undefined;
  } catch (error) {
    refuse((error as Error).message, 2);
  }
}

/** The settings, checked before anything is built or opened: a bad one stops npm start with one line. */
function settings(production: boolean) {
  try {
    return {
      // In development an outbox stands in for a transport; production has none, so no live link is ever printed.
      mailer: nodeMailer(process.env, production ? undefined : path.join(KEYS_DIR, 'mail')) ?? NO_MAIL,
      port: wholeNumberSetting('PORT', process.env.PORT, 8888, 1, 65_535),
      rateLimitPerMinute: wholeNumberSetting(
        'RATE_LIMIT_PER_MINUTE',
        process.env.RATE_LIMIT_PER_MINUTE,
        DEFAULT_RATE_LIMIT_PER_MINUTE,
        1,
      ),
      issueLimitPerMinute: issueLimitFrom(process.env.PORTAL_ISSUE_LIMIT_PER_MINUTE),
      cachePurgeUrl: purgeUrl(process.env.CACHE_PURGE_URL),
      trustedProxies: trustedProxiesFrom(process.env.TRUSTED_PROXIES),
      // Checked here so that a mistyped DATABASE_URL or pool setting stops the start before anything is built.
      postgres: postgresSettings(process.env),
    };
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    refuse(error.message);
  }
}

const USAGE = `usage: npm start [-- --production]

Builds dist/ when it is missing or stale, says which archive it serves, makes
a development key on first start (kept in data/dev-key.txt) and serves the API,
the OpenAPI document, the reference page and the key portal on
http://127.0.0.1:8888 until stopped (Ctrl-C).

Production mode (NODE_ENV=production, or --production): no development key
(one an earlier development start left is revoked, and the start says so),
and mail goes only to MAIL_API_URL or SMTP_URL (never the console or data/mail/);
without either, the portal's sign-in answers 503 saying mail is not set up.

Environment: PORT, HOST, ARCHIVE_SOURCE (the source to build from), DIST_DIR,
RATE_LIMIT_PER_MINUTE, LOG_REQUESTS=0 (no access log), KEYS_DB (default
data/keys.db), DATABASE_URL (postgres://...: keys in PostgreSQL instead,
shared by several servers; POSTGRES_POOL_MAX, POSTGRES_CONNECT_TIMEOUT_MS,
POSTGRES_QUERY_TIMEOUT_MS), MAIL_API_URL and MAIL_API_TOKEN (an HTTP e-mail API) or
SMTP_URL, MAIL_FROM (without a mail transport mails are printed and written to
data/mail/), PUBLIC_BASE_URL, PORTAL_ISSUE_LIMIT_PER_MINUTE, CACHE_PURGE_URL
(Varnish's purge hook, docs/caching.md), TRUSTED_PROXIES (the addresses or
ranges of proxies in front, such as 127.0.0.1 for Varnish on this machine:
the portal's limits then count the client they name in X-Forwarded-For).

  --production  production mode, as NODE_ENV=production
  -h, --help    this text`;

async function main() {
  const { values } = commandLine({ name: 'start', usage: USAGE, options: { production: { type: 'boolean' } } });
  const production = values.production === true || process.env.NODE_ENV === 'production';
  const { port, rateLimitPerMinute, issueLimitPerMinute, mailer, cachePurgeUrl, trustedProxies } = settings(production);
  await currentDist(refuse);
  const host = process.env.HOST ?? '127.0.0.1';
  const quiet = process.env.LOG_REQUESTS === '0';
  const base = `http://${host}:${port}`;
  const log = createLog();
  // stdout or stderr closed under the server (`npm start | head`): a
  // later console line must not stop it (the log says what it dropped).
  process.stdout.on('error', () => {});
  process.stderr.on('error', () => {});
  const store = await openKeys(log);
  if (store.imported)
    console.log(
      `imported ${store.imported.keys} keys from ${store.imported.file} into ${KEYS_DB} (once; the JSON file is no longer read)`,
    );
  const { keys } = store;
  const { server } = createNodeServer({
    dist: DIST,
    keys,
    rateLimitPerMinute,
    log: quiet ? undefined : log,
    // A shared cache in front (deploy/varnish/default.vcl): answers are marked for it and purged through this hook.
    cachePurgeUrl,
    // Behind Varnish or another proxy: the portal's limits count the client it names, never the proxy.
    trustedProxies,
    portal: {
      sendMail: mailer.send,
      // Links point at this server's own address unless PUBLIC_BASE_URL says otherwise: never at a Host header.
      publicBaseUrl: process.env.PUBLIC_BASE_URL || base,
      issueLimitPerMinute,
    },
  });
  const dev = production ? '' : await devKey(keys, store).catch(refuseKeys);
  const revokedDev = production ? await revokeDevKey(keys).catch(refuseKeys) : null;

  await new Promise<void>((resolve) => {
    // A port that cannot be had stops npm start with one line; once listening, this no longer applies.
    const refused = (error: NodeJS.ErrnoException) => {
      const why =
        error.code === 'EADDRINUSE'
          ? 'is in use: stop what holds it, or set PORT to another'
          : `cannot be opened (${error.code ?? error.message})`;
      refuse(`${host}:${port} ${why}`);
    };
    server.once('error', refused);
    server.listen(port, host, () => {
      server.off('error', refused);
      resolve();
    });
  });
  console.log(
    `Film Awards Archive API on ${base}  (OpenAPI: ${base}/openapi.json)${production ? '  [production mode]' : ''}`,
  );
  console.log(`key portal: ${base}/portal  (keys in ${store.where}; mail: ${mailer.describe})`);
  if (revokedDev) console.log(revokedDev);
  if (dev) {
    const file = path.relative(process.cwd(), DEV_KEY_FILE) || DEV_KEY_FILE;
    console.log(`development key: ${keyId(dev)}… (the whole key is in ${file}; logs never show it)`);
    for (const id of ['ceremonyByYear', 'personByName', 'categoryByName'] as const) {
      console.log(
        `  curl "${base}${examplePath(
          ROUTES.find((r) => r.id === id)!,
          '$(cat ' + file + ')',
        )}"`,
      );
    }
  } else if (mailer === NO_MAIL) {
    console.log(
      'keys: npm run --silent keys -- issue you@example.org (the portal cannot mail sign-in links until MAIL_API_URL or SMTP_URL is set)',
    );
  } else {
    console.log('keys: sign in at /portal, or npm run --silent keys -- issue you@example.org');
  }
  // Stop within STOP_MS whatever the log's destination does: no new connections, idle ones closed now,
  // requests in flight given most of the time, the log what is left (a
  // stalled stdout never holds the exit); a second signal stops at once.
  let stopping = false;
  const stop = () => {
    if (stopping) process.exit(1);
    stopping = true;
    setTimeout(() => process.exit(0), STOP_MS);
    server.close(async () => {
      await store.close();
      mailer.close();
      const flushed = await log.flush(STOP_MS / 5);
      if (!flushed) console.error('log: stopped with lines the destination (stdout) had not taken; they are lost');
      if (log.dropped > 0) console.error(`log: ${log.dropped} lines dropped in all`);
      process.exit(0);
    });
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), (STOP_MS * 3) / 5).unref();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  stopWithNpm(stop);
}

/** How often a server started by npm looks whether its npm is still there. */
const PARENT_CHECK_MS = 500;

/**
 * Under `npm start` a supervisor (systemd, a container runtime) holds and
 * signals npm's pid. The start script `exec`s this process, so npm hands it
 * SIGTERM and SIGINT; an npm killed outright hands on nothing, and this
 * process would serve on, orphaned: once its parent is no longer the one it
 * started under, it stops as if signalled. Run directly (`node cli/start.ts`,
 * nohup) it keeps serving whatever its parent does.
 */
function stopWithNpm(stop: () => void): void {
  if (!process.env.npm_lifecycle_event) return;
  const parent = process.ppid;
  setInterval(() => process.ppid !== parent && stop(), PARENT_CHECK_MS).unref();
}

await main();
