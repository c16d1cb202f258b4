/**
 * npm start: builds dist/ if it is missing or stale (build/prepare-dist.ts:
 * never over a full archive from the sample, never because keys changed),
 * says which archive it serves, makes a development key on first start, then
 * serves on 127.0.0.1:PORT (default 8888).
 *
 * Environment: PORT, HOST, ARCHIVE_SOURCE, KEYS_FILE, DIST_DIR, RATE_LIMIT_PER_MINUTE,
 * LOG_REQUESTS (0 to silence the access log).
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BuildRefused } from '../../build/build.ts';
import { recoverOutput } from '../../build/output.ts';
import { prepareDist } from '../../build/prepare-dist.ts';
import { ROOT } from '../../build/source.ts';
import { examplePath, ROUTES } from '../routes.ts';
import { nodePortal } from './portal.node.ts';
import { createNodeServer } from './server.node.ts';

const DIST = path.resolve(process.env.DIST_DIR ?? path.join(ROOT, 'dist'));
const KEYS_FILE = path.resolve(process.env.KEYS_FILE ?? path.join(ROOT, 'data/keys.json'));
const DEV_KEY_FILE = path.join(path.dirname(KEYS_FILE), 'dev-key.txt');

async function main() {
  await recoverOutput(DIST);
  try {
    await prepareDist(DIST);
  } catch (error) {
    if (!(error instanceof BuildRefused)) throw error;
    console.error(`npm start: ${error.message}`);
    process.exit(1);
  }
  const port = Number(process.env.PORT ?? 8888);
  const host = process.env.HOST ?? '127.0.0.1';
  const quiet = process.env.LOG_REQUESTS === '0';
  const { server, keys } = createNodeServer({
    dist: DIST,
    keysFile: KEYS_FILE,
    rateLimitPerMinute: process.env.RATE_LIMIT_PER_MINUTE ? Number(process.env.RATE_LIMIT_PER_MINUTE) : undefined,
    log: quiet ? undefined : (line) => console.log(line),
    portal: (keys) => nodePortal(keys, { log: quiet ? undefined : (line) => console.log(line) }),
  });

  // A development key on first start, remembered (git-ignored) so later starts can show examples.
  let devKey = await readFile(DEV_KEY_FILE, 'utf8').then((k) => k.trim(), () => '');
  if (!devKey || !(await keys.verify(devKey))) {
    const active = (await keys.list()).filter((r) => !r.revoked);
    if (active.length === 0 || devKey) {
      devKey = await keys.issue(`dev-${Date.now()}@localhost.localdomain`);
      await writeFile(DEV_KEY_FILE, `${devKey}\n`, { mode: 0o600 });
      console.log(`made a development key (kept in ${path.relative(ROOT, DEV_KEY_FILE)}, git-ignored)`);
    } else {
      devKey = '';
    }
  }

  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const base = `http://${host}:${port}`;
  console.log(`Film Awards Archive API on ${base}  (OpenAPI: ${base}/openapi.json)`);
  console.log(`key portal: ${base}/portal`);
  if (devKey) {
    console.log(`development key: ${devKey}`);
    for (const id of ['ceremonyByYear', 'personByName', 'categoryByName'] as const) {
      console.log(`  curl '${base}${examplePath(ROUTES.find((r) => r.id === id)!, devKey)}'`);
    }
  } else {
    console.log('keys: npm run --silent keys -- issue you@example.org');
  }
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

await main();
