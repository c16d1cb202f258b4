/**
 * What a deploy would get, checked without the network: a clean copy of the
 * repository (the files git knows, node_modules hard-linked in) goes through
 * the real `netlify build --offline` with ARCHIVE_SOURCE, and the tests read
 * what Netlify would upload: the publish folder, the edge functions' manifest
 * and bundle, the portal function's manifest and zip; then the real
 * `wrangler deploy --dry-run` of the Worker over the same build. Slow (the real build of
 * the full archive, about half a minute on two cores).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { publicFiles } from '../../build/site/public.ts';
import source from '../../data/source.json' with { type: 'json' };
import { config as portalConfig } from '../../netlify/functions/portal.mts';
import { dataPath, MANIFEST_PATH, parseRef } from '../../src/store/refs.ts';
import { HEALTH_PATH } from '../../src/http/request.ts';
import { examplePath, ROUTES } from '../../src/shared/routes.ts';
import type { Manifest } from '../../src/shared/types.ts';
import { storedFilesMissing } from '../../cli/check-stored.ts';
import { edgeRouter } from '../../cli/lib/edge-routes.ts';
import { FULL_SOURCE, ROOT } from '../helpers/paths.ts';
import { cleanCopy } from '../helpers/temp.ts';
import { storedCategoryIndex } from '../helpers/stored.ts';

/** Netlify's limits (docs.netlify.com; summarised in shared/docs/NETLIFY.md, beside this repository). */
const EDGE_BUNDLE_LIMIT = 20 * 1024 * 1024;
const FILES_PER_DIRECTORY_LIMIT = 54_000;

interface EdgeRoute {
  function: string;
  pattern: string;
  excluded_patterns?: string[];
}

interface EdgeManifest {
  bundles: { asset: string; format: string }[];
  routes: EdgeRoute[];
  post_cache_routes: EdgeRoute[];
  function_config: Record<string, { excluded_patterns?: string[] }>;
}

interface FunctionsManifest {
  functions: { name: string; path: string; mainFile: string; runtimeVersion: string; routes: { pattern: string }[] }[];
}

/** `npm run check:netlify` (netlify build --offline) in `cwd` under this Node; resolves with its output. */
async function netlifyBuild(cwd: string): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, ARCHIVE_SOURCE: FULL_SOURCE, NO_COLOR: '1', FORCE_COLOR: '0' };
  for (const name of Object.keys(env)) if (name.startsWith('VITEST') || name === 'NODE_ENV') delete env[name];
  env.PATH = [path.join(cwd, 'node_modules/.bin'), path.dirname(process.execPath), env.PATH].join(path.delimiter);
  // netlify-cli leaves files in the temp folder (a compile cache, an
  // empty tmp-* file): keep them inside the copy, removed with it.
  env.TMPDIR = path.join(cwd, '.tmp');
  await mkdir(env.TMPDIR, { recursive: true });
  const child = spawn(process.execPath, [path.join(cwd, 'cli/netlify-check.ts')], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`npm run check:netlify exited ${code}:\n${output}`)),
    );
  });
}

/** Names and Unix modes of a zip's entries, from its central directory. */
function zipEntries(zip: Buffer): { name: string; mode: number }[] {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error('Expected a zip file: no end of central directory record');
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const entries = [];
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error(`Expected a central directory header at byte ${at}`);
    const nameLength = zip.readUInt16LE(at + 28);
    const skip = zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    entries.push({ name: zip.toString('utf8', at + 46, at + 46 + nameLength), mode: zip.readUInt32LE(at + 38) >>> 16 });
    at += 46 + nameLength + skip;
  }
  return entries;
}

/** Every file under `dir`, as paths relative to it with `/` separators. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
}

let copy: string;
let publish: string;
let output: string;
let edge: EdgeManifest;
let functions: FunctionsManifest;

beforeAll(async () => {
  copy = await cleanCopy('deploy', 'hardlink');
  output = await netlifyBuild(copy);
  publish = path.join(copy, 'dist');
  edge = JSON.parse(await readFile(path.join(copy, '.netlify/edge-functions-dist/manifest.json'), 'utf8'));
  functions = JSON.parse(await readFile(path.join(copy, '.netlify/functions/manifest.json'), 'utf8'));
}, 600_000);

/** Whether Netlify, by the edge manifest, runs function `name` for a request to `pathname`. */
function edgeRuns(name: string, pathname: string): boolean {
  const alsoExcluded = edge.function_config[name]?.excluded_patterns ?? [];
  return [...edge.routes, ...edge.post_cache_routes].some(
    (r) =>
      r.function === name &&
      new RegExp(r.pattern).test(pathname) &&
      ![...(r.excluded_patterns ?? []), ...alsoExcluded].some((e) => new RegExp(e).test(pathname)),
  );
}

/**
 * Paths a deploy must hand to the API function: every route under
 * every root, the private data prefix, `/` and unknown paths.
 */
async function apiPaths(): Promise<string[]> {
  const key = `faa_${'A'.repeat(32)}`;
  const routes = ROUTES.flatMap((route) =>
    route.roots.map((root) => examplePath(route, key).replace(`/${route.roots[0]}/`, `/${root}/`)),
  );
  const data = (await filesUnder(path.join(publish, '_data'))).slice(0, 3).map((f) => `/_data/${f}`);
  // `/` goes through the function: JSON clients get the service description, browsers the page (context.next()).
  return [...routes, `/${MANIFEST_PATH}`, ...data, '/', HEALTH_PATH, '/no/such/route'];
}

/**
 * Paths the CDN must serve without the function: every public file
 * (and `.html` pretty URLs) and the portal function's routes.
 */
async function publicPaths(): Promise<string[]> {
  const files = (await filesUnder(publish)).filter((f) => !f.startsWith('_data/'));
  const pretty = files
    .filter((f) => f.endsWith('.html') && f !== 'index.html')
    .map((f) => `/${f.slice(0, -'.html'.length)}`);
  const portal = [portalConfig.path].flat().map((p) => p.replace('*', 'anything'));
  return [...files.map((f) => `/${f}`), ...pretty, ...portal];
}

describe('npm run check:netlify (netlify build --offline) on a clean copy', () => {
  it("prints no error, only the line saying why offline it leaves one of netlify-cli's out, and what is ready", () => {
    expect(output).not.toMatch(/^error:/m);
    expect(output).not.toContain('edge.netlify.com/bootstrap/globals/types.ts');
    expect(output).toContain(
      "(offline: netlify-cli could not fetch the edge functions' inline-config helper from edge.netlify.com",
    );
    expect(output).toContain(
      'check:netlify: the build, its stored files, the edge function and the portal function are ready',
    );
  });

  it('checks every stored file the manifest names after the build, before anything is published', () => {
    expect(output).toContain('check-stored: every stored file of dist is there and holds the bytes its name promises');
  });

  it('gets its data through data:fetch from ARCHIVE_SOURCE, checked against the pin', async () => {
    expect(output).toContain(`from ${FULL_SOURCE} (sha256 verified)`);
    const cached = await readFile(path.join(copy, source.cacheFile));
    expect(createHash('sha256').update(cached).digest('hex')).toBe(source.sha256);
  });

  it('publishes the full archive and every public file the build makes', async () => {
    const manifest = JSON.parse(await readFile(path.join(publish, MANIFEST_PATH), 'utf8')) as Manifest;
    expect(manifest.source).toMatchObject({ sha256: source.sha256, sample: false });
    expect(Object.keys(manifest.years)).toHaveLength(97);
    const files = await filesUnder(publish);
    for (const name of publicFiles(manifest).keys()) expect(files).toContain(name);
    expect(files).toEqual(expect.arrayContaining(['openapi.json', 'index.html', MANIFEST_PATH]));
    expect(files.filter((f) => f.startsWith('_data/r/')).length).toBeGreaterThan(1000);
  });

  it("keeps every published folder under Netlify's files-per-directory limit", async () => {
    const perDir = new Map<string, number>();
    for (const file of await filesUnder(publish))
      perDir.set(path.dirname(file), (perDir.get(path.dirname(file)) ?? 0) + 1);
    expect(Math.max(...perDir.values())).toBeLessThan(FILES_PER_DIRECTORY_LIMIT);
  });

  it('routes every API path, under every root, and the private data prefix to the edge function', async () => {
    for (const pathname of await apiPaths())
      expect({ pathname, runs: edgeRuns('api', pathname) }).toEqual({ pathname, runs: true });
  });

  it("leaves every public file and the portal function's routes to the CDN", async () => {
    for (const pathname of await publicPaths())
      expect({ pathname, runs: edgeRuns('api', pathname) }).toEqual({ pathname, runs: false });
  });

  it('routes exactly as the CDN stand-in the behaviour suite uses, both reading netlify.toml', async () => {
    const standIn = edgeRouter(await readFile(path.join(ROOT, 'netlify.toml'), 'utf8'), 'api');
    for (const pathname of [...(await apiPaths()), ...(await publicPaths())]) {
      expect({ pathname, standIn: standIn(pathname) }).toEqual({ pathname, standIn: edgeRuns('api', pathname) });
    }
  });

  it("bundles the edge function within Netlify's 20 MB", async () => {
    expect(edge.bundles.length).toBeGreaterThan(0);
    let bytes = 0;
    for (const bundle of edge.bundles)
      bytes += (await stat(path.join(copy, '.netlify/edge-functions-dist', bundle.asset))).size;
    expect(bytes).toBeGreaterThan(10_000);
    expect(bytes).toBeLessThanOrEqual(EDGE_BUNDLE_LIMIT);
  });

  it('zips the portal function with its declared routes, its dependencies and runtime nodejs24.x', async () => {
    const portal = functions.functions.find((f) => f.name === 'portal');
    expect(portal).toBeDefined();
    expect(portal!.runtimeVersion).toBe('nodejs24.x');
    expect(portal!.routes.map((r) => r.pattern)).toEqual([portalConfig.path].flat());
    const entries = zipEntries(await readFile(portal!.path));
    expect(entries.map((e) => e.name)).toContain('netlify/functions/portal.mjs');
    // A symlink in the zip would point outside the deployed function (the hard-linked node_modules is why).
    expect(entries.filter((e) => (e.mode & 0o170000) === 0o120000)).toEqual([]);
    expect(entries.some((e) => e.name.startsWith('node_modules/'))).toBe(true);
  });
});

/** Cloudflare Workers' free plan (developers.cloudflare.com/workers/platform/limits). */
const WORKER_LIMITS = { assetFiles: 20_000, assetBytes: 25 * 1024 * 1024, compressedWorker: 3 * 1024 * 1024 };

/** `npm run deploy:cloudflare -- --dry-run` in the clean copy. */
async function deployDryRun(outdir: string): Promise<{ code: number | null; output: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ARCHIVE_SOURCE: FULL_SOURCE,
    NO_COLOR: '1',
    FORCE_COLOR: '0',
    WRANGLER_SEND_METRICS: 'false',
  };
  delete env.DIST_DIR;
  env.TMPDIR = path.join(copy, '.tmp');
  const child = spawn(
    process.execPath,
    [path.join(copy, 'cli/cloudflare-deploy.ts'), '--dry-run', '--outdir', outdir],
    { cwd: copy, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, output })));
}

describe('wrangler deploy --dry-run on the same clean copy, after the Netlify build', () => {
  let dryRun: { code: number | null; output: string };
  const outdir = () => path.join(copy, '.worker-bundle');

  beforeAll(async () => {
    dryRun = await deployDryRun(outdir());
  }, 240_000);

  it('bundles the Worker and checks its assets offline, uploading nothing', () => {
    expect(dryRun.code, dryRun.output).toBe(0);
    expect(dryRun.output).toContain('--dry-run: exiting now');
    expect(dryRun.output).toMatch(/env\.DB \(film-awards-keys\)\s+D1 Database/);
    expect(dryRun.output).toMatch(/env\.ASSETS\s+Assets/);
  });

  it('keeps the Worker within 3 MiB compressed', async () => {
    const bundle = (await filesUnder(outdir())).filter((f) => f.endsWith('.js'));
    expect(bundle.length).toBeGreaterThan(0);
    let compressed = 0;
    for (const file of bundle) compressed += gzipSync(await readFile(path.join(outdir(), file))).length;
    expect(compressed).toBeGreaterThan(5_000);
    expect(compressed).toBeLessThanOrEqual(WORKER_LIMITS.compressedWorker);
  });

  it('serves the very build Netlify publishes, within the free plan: at most 20,000 asset files, none over 25 MiB', async () => {
    const files = await filesUnder(publish);
    // What wrangler would upload, as it counts it (its count takes in the folders too).
    const read = Number(/Read (\d+) files from the assets directory/.exec(dryRun.output)?.[1]);
    expect(read).toBeGreaterThanOrEqual(files.length);
    expect(read).toBeLessThanOrEqual(WORKER_LIMITS.assetFiles);
    for (const file of files)
      expect([file, (await stat(path.join(publish, file))).size <= WORKER_LIMITS.assetBytes]).toEqual([file, true]);
  });

  it('refuses to deploy a build whose stored file no longer hashes to its name (the Worker streams answers unchecked)', async () => {
    const manifest = JSON.parse(await readFile(path.join(publish, MANIFEST_PATH), 'utf8')) as Manifest;
    const file = dataPath(parseRef(manifest.archive)!.at.file)!;
    const original = await readFile(path.join(publish, file));
    const damaged = Buffer.from(original);
    damaged[damaged.length - 2] ^= 0x20;
    await unlink(path.join(publish, file)); // a new file, never a write through a hard link
    await writeFile(path.join(publish, file), damaged);
    try {
      const refused = await deployDryRun(path.join(copy, '.worker-bundle-refused'));
      expect(refused.code, refused.output).toBe(1);
      expect(refused.output).toContain(
        `deploy:cloudflare: 1 file(s) of dist/ no longer hold the bytes their names (hashes) promise, ${file}: rebuild with npm run build`,
      );
      expect(refused.output).not.toContain('--dry-run: exiting now');
    } finally {
      await unlink(path.join(publish, file));
      await writeFile(path.join(publish, file), original);
    }
  }, 120_000);

  /** `node cli/check-stored.ts` as the Netlify build runs it after `npm run build`. */
  async function netlifyCheck(): Promise<{ code: number | null; output: string }> {
    const child = spawn(process.execPath, [path.join(copy, 'cli/check-stored.ts')], {
      cwd: copy,
      env: { ...process.env, DIST_DIR: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    return new Promise((resolve) => child.on('exit', (code) => resolve({ code, output })));
  }

  /** A stored file named only inside a stored index (a person shard), not by the manifest itself. */
  async function fileNamedByAnIndex(manifest: Manifest): Promise<string> {
    const direct = new Set(JSON.stringify(manifest).match(/[0-9a-f]{20}/g));
    for (const shardRef of manifest.shards) {
      const at = parseRef(shardRef)!.at;
      const bytes = await readFile(path.join(publish, dataPath(at.file)!));
      const shard = JSON.parse((at.range ? bytes.subarray(...at.range) : bytes).toString('utf8')) as Record<
        string,
        [string, Record<string, string>]
      >;
      for (const [all] of Object.values(shard)) {
        const file = parseRef(all)!.at.file;
        if (!direct.has(file)) return dataPath(file)!;
      }
    }
    throw new Error('Expected a stored file named only by a shard');
  }

  it('finds missing a file named only by the category index, whose lines are each JSON: the file joins are cut from', async () => {
    const file = dataPath(parseRef((await storedCategoryIndex(publish)).joined)!.id)!;
    const original = await readFile(path.join(publish, file));
    await unlink(path.join(publish, file));
    try {
      expect(await storedFilesMissing(publish)).toEqual([file]);
    } finally {
      await writeFile(path.join(publish, file), original);
    }
  });

  it('refuses to deploy, on Cloudflare and Netlify, a build missing a stored file the manifest names, directly or through an index', async () => {
    const manifest = JSON.parse(await readFile(path.join(publish, MANIFEST_PATH), 'utf8')) as Manifest;
    expect((await netlifyCheck()).code).toBe(0);
    for (const file of [dataPath(parseRef(manifest.archive)!.at.file)!, await fileNamedByAnIndex(manifest)]) {
      const original = await readFile(path.join(publish, file));
      await unlink(path.join(publish, file));
      try {
        const refused = await deployDryRun(path.join(copy, '.worker-bundle-missing'));
        expect(refused.code, refused.output).toBe(1);
        expect(refused.output).toContain(
          `deploy:cloudflare: 1 file(s) the manifest names are missing from dist/, ${file}: rebuild with npm run build`,
        );
        expect(refused.output).not.toContain('--dry-run: exiting now');
        const netlify = await netlifyCheck();
        expect(netlify.code, netlify.output).toBe(1);
        expect(netlify.output).toBe(
          `check-stored: 1 file(s) the manifest names are missing from dist/, ${file}: rebuild with npm run build\n`,
        );
      } finally {
        await writeFile(path.join(publish, file), original);
      }
    }
  }, 240_000);
});
