/**
 * npm run deploy:cloudflare: deploys the Worker and dist/ with `wrangler
 * deploy`, after checking every stored file of dist/ against its name (the
 * Worker streams answers without hashing them) and every stored file the
 * manifest names (directly or through its indexes) against dist/: a missing
 * one is refused as a changed one is. The Worker deployed carries the build's
 * whole-read files in its code (adapters/_cloudflare/worker-bundle.node.ts), through a config
 * written for this build into a temporary folder. `-- --dry-run` bundles the
 * Worker and checks its assets without uploading anything (it works offline)
 * and prints the bundle's size.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { commandLine, type Refuse, refuser } from '../lib/command-line.ts';
import { storedFilesProblem } from './check-stored.ts';
import { currentDist } from './lib/dist.ts';
import { DIST } from './lib/paths.ts';
import { configuredDatabaseId, PLACEHOLDER_DATABASE_ID, runWrangler, workerConfig } from './lib/wrangler.ts';

const USAGE = `usage: npm run deploy:cloudflare [-- --dry-run] [-- --outdir DIR]

Deploys the API as a Cloudflare Worker with wrangler deploy: the Worker
(adapters/cloudflare.ts), dist/ as its static assets, the D1 binding of
wrangler.jsonc. Builds dist/ first when it is missing or stale, and refuses
when a stored file no longer hashes to its name or one the manifest
names is missing. Once, before
the first deploy: npx wrangler login, npx wrangler d1 create film-awards-keys
(put the id it prints into wrangler.jsonc), npx wrangler d1 migrations apply
DB --remote, and for mail npx wrangler secret put MAIL_API_TOKEN.

Options:
  --dry-run      bundle and check, upload nothing (works offline)
  --outdir DIR   where --dry-run writes the bundle
  -h, --help     this text`;

const refuse: Refuse = refuser('deploy:cloudflare');

async function main() {
  const { values } = commandLine({
    name: 'deploy:cloudflare',
    usage: USAGE,
    options: { 'dry-run': { type: 'boolean' }, outdir: { type: 'string' } },
  });
  const dryRun = values['dry-run'] === true;
  if (!dryRun && configuredDatabaseId() === PLACEHOLDER_DATABASE_ID) {
    refuse(
      'wrangler.jsonc still holds the placeholder D1 database id: run npx wrangler d1 create film-awards-keys and put its id there (see --help)',
    );
  }
  await currentDist(refuse);
  // The Worker streams an answer's own file without hashing it (Cloudflare
  // keeps assets by content): so every stored file is checked here, once.
  // A missing one too: the manifest (and the indexes it names) says which must be there.
  const problem = await storedFilesProblem(DIST);
  if (problem) refuse(problem);
  const folder = mkdtempSync(path.join(os.tmpdir(), 'faa-deploy-'));
  let code = 1;
  try {
    const config = workerConfig(DIST, folder);
    code = await runWrangler([
      'deploy',
      '--config',
      config,
      ...(dryRun ? ['--dry-run'] : []),
      ...(values.outdir ? ['--outdir', path.resolve(values.outdir)] : []),
    ]);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  process.exit(code);
}

await main();
