/**
 * npm run dev:cloudflare: the Cloudflare Worker on this machine, offline, as a
 * deploy answers: adapters/cloudflare.ts under `wrangler dev` (workerd), dist/
 * as its static assets, keys in a local D1 whose migrations (migrations/) are
 * applied first. Settings are passed from the environment to the Worker.
 */
import path from 'node:path';
import { commandLine, type Refuse, refuser, settingOrRefuse } from './command-line.ts';
import { startMailOutbox } from './mail-outbox.ts';
import { currentDist } from './dist.ts';
import { DIST, ROOT } from './paths.ts';
import { localConfig, runWrangler, wrangler } from './wrangler.ts';

const USAGE = `usage: npm run dev:cloudflare

Runs the API as the Cloudflare Worker on this machine, offline: the Worker
(adapters/cloudflare.ts) under wrangler dev (workerd), dist/ as its static
assets, keys in a local D1 database (the migrations in migrations/ applied
first). Builds dist/ first when it is missing or stale, as npm start does.
Stop it with Ctrl-C.

Options:
  -h, --help   this text

Environment:
  PORT, HOST             where it listens (default 127.0.0.1:8787)
  CLOUDFLARE_LOCAL_DIR   the local D1 (keys) and the mail outbox (default data/cloudflare-local/)
  MAIL_API_URL, MAIL_API_TOKEN, MAIL_FROM   the HTTP e-mail API the Worker mails sign-in links
                         through; without MAIL_API_URL, mail is printed and written to
                         CLOUDFLARE_LOCAL_DIR/mail/
  PUBLIC_BASE_URL, RATE_LIMIT_PER_MINUTE, PORTAL_ISSUE_LIMIT_PER_MINUTE   passed to the Worker
  ARCHIVE_SOURCE, DIST_DIR   the source to build from and the build served, as for npm start`;

/** The environment the Worker is given, as wrangler's `--var NAME:value`. */
const PASSED = ['MAIL_API_URL', 'MAIL_API_TOKEN', 'MAIL_FROM', 'PUBLIC_BASE_URL', 'RATE_LIMIT_PER_MINUTE', 'PORTAL_ISSUE_LIMIT_PER_MINUTE'];

const refuse: Refuse = refuser('dev:cloudflare');

async function main() {
  commandLine({ name: 'dev:cloudflare', usage: USAGE, options: {} });
  const port = settingOrRefuse(refuse, 'PORT', 8787, 1, 65_535);
  const state = path.resolve(process.env.CLOUDFLARE_LOCAL_DIR || path.join(ROOT, 'data/cloudflare-local'));
  await currentDist(refuse);
  const config = localConfig(DIST, state);
  // CI=1: wrangler applies the migrations without asking to confirm.
  if ((await runWrangler(['d1', 'migrations', 'apply', 'DB', '--local', '--config', config, '--persist-to', state], { CI: '1' })) !== 0) {
    refuse('the D1 migrations could not be applied (above)');
  }
  const vars = Object.fromEntries(PASSED.filter((name) => process.env[name]).map((name) => [name, process.env[name]!]));
  const outbox = vars.MAIL_API_URL ? null : await startMailOutbox(path.join(state, 'mail'));
  if (outbox) Object.assign(vars, { MAIL_API_URL: outbox.url, MAIL_API_TOKEN: outbox.token });
  const host = process.env.HOST ?? '127.0.0.1';
  console.log(`key portal: http://${host}:${port}/portal  (keys in the local D1 under ${state}; mail: ${outbox?.describe ?? vars.MAIL_API_URL})`);
  const flags = Object.entries(vars).flatMap(([name, value]) => ['--var', `${name}:${value}`]);
  const child = wrangler(['dev', '--config', config, '--port', String(port), '--ip', host, '--persist-to', state, '--show-interactive-dev-session=false', ...flags]);
  const stop = () => child.kill('SIGTERM');
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  child.once('exit', (code) => {
    outbox?.close();
    process.exit(code ?? 0);
  });
}

await main();
