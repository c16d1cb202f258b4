/**
 * Safe operations on a machine whose dist/ holds the full archive: a fresh
 * clone of this working tree (no data/cache/, no ARCHIVE_SOURCE) where the
 * full archive was built once. A build or `npm start` without a source must
 * not replace it with the sample; `npm start` says which archive it serves
 * and never rebuilds because key files changed. The steps run in order, each
 * on the dist/ the previous one left.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import source from '../../data/source.json' with { type: 'json' };
import { MANIFEST_PATH } from '../../src/store/refs.ts';
import type { Manifest } from '../../src/shared/types.ts';
import { rawRequest } from '../helpers/http.ts';
import { FULL_SOURCE } from '../helpers/paths.ts';
import { startServer } from '../helpers/processes.ts';
import { cleanCopy, treeDigest } from '../helpers/temp.ts';

let clone: string;
let dist: string;
/** How the full archive is named: the pinned revision, with the figures the shared data's README gives. */
const FULL_ARCHIVE = `the full archive, revision ${source.commit.slice(0, 7)} (12137 nominations; 97 ceremony years, 1929-2026; sha256 ${source.sha256.slice(0, 12)})`;

/** `npm run build` in the clone (build/build.ts under this Node), with no ARCHIVE_SOURCE unless `env` gives one. */
function buildCommand(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const fullEnv: NodeJS.ProcessEnv = { ...process.env };
  delete fullEnv.ARCHIVE_SOURCE;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['build/build.ts', ...args],
      { cwd: clone, env: { ...fullEnv, ...env }, maxBuffer: 1 << 24 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

const heldSource = async () => (JSON.parse(await readFile(path.join(dist, MANIFEST_PATH), 'utf8')) as Manifest).source;

/** Starts the server in the clone, asks it for Meryl Streep with the development key its examples use, and stops it. */
async function startAndAsk(env: Record<string, string> = {}): Promise<{ output: string; status: number }> {
  const server = await startServer(env, { cwd: clone, ready: 'curl ' });
  try {
    expect(server.output()).toContain('$(cat data/dev-key.txt)');
    const key = (await readFile(path.join(clone, 'data/dev-key.txt'), 'utf8')).trim();
    const { status } = await rawRequest(server.port, 'GET', `/person/name=Meryl%20Streep/apikey=${key}`);
    return { output: server.output(), status };
  } finally {
    await server.stop();
  }
}

beforeAll(async () => {
  clone = await cleanCopy('operations');
  dist = path.join(clone, 'dist');
  const built = await buildCommand([], { ARCHIVE_SOURCE: FULL_SOURCE });
  expect(built.code, built.stderr).toBe(0);
  expect(await heldSource()).toMatchObject({ sha256: source.sha256, sample: false });
}, 300_000);

describe('a machine whose dist/ holds the full archive, with no source given', () => {
  it('refuses to build the sample over it, in one sentence, and leaves dist/ whole', async () => {
    const before = await treeDigest(dist);
    const { code, stdout, stderr } = await buildCommand([]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    const lines = stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(
      `build failed: refusing to build: dist/ holds ${FULL_ARCHIVE} and no source was given, so this build would replace it with the small sample; ` +
        'set ARCHIVE_SOURCE=/path/to/oscars.csv (or run npm run data:fetch) to rebuild it, or run again with --accept-changes to replace it.',
    );
    expect(await treeDigest(dist)).toEqual(before);
  });

  it('npm start serves it as it is, says which archive it serves, and answers Meryl Streep', async () => {
    const { output, status } = await startAndAsk();
    expect(output).not.toContain('building:');
    expect(output).not.toContain('SMALL SAMPLE');
    expect(output).toContain('serving dist/ as it is rather than rebuilding it from the sample');
    expect(output).toContain(`serving ${FULL_ARCHIVE}`);
    expect(status).toBe(200);
  });

  it('npm start never rebuilds because key files, the development key or mail changed', async () => {
    const data = path.join(clone, 'data');
    await mkdir(path.join(data, 'mail'), { recursive: true });
    const later = new Date(Date.now() + 60_000);
    expect(existsSync(path.join(data, 'keys.db'))).toBe(true); // made by the start before
    for (const file of ['keys.json', 'keys.db', 'keys.db-wal', 'keys.db-shm', 'dev-key.txt', 'mail/0001.eml']) {
      const full = path.join(data, file);
      // The SQLite files are only touched (a made-up WAL would be read as one); the others are written if missing
      // (an old key file as the JSON store wrote it: npm start imports it once, and refuses a broken one).
      if (!existsSync(full) && !file.startsWith('keys.db'))
        await writeFile(full, file === 'keys.json' ? '{"keys": []}\n' : 'written after the build\n');
      if (existsSync(full)) await utimes(full, later, later);
    }
    // With the source given, staleness is checked in full: only key files are newer than dist/.
    const { output, status } = await startAndAsk({ ARCHIVE_SOURCE: FULL_SOURCE });
    expect(output).not.toContain('building:');
    expect(output).toContain(`serving ${FULL_ARCHIVE}`);
    expect(status).toBe(200);
  });

  it('npm start says when the code changed since, and still serves the full archive rather than the sample', async () => {
    const later = new Date(Date.now() + 120_000);
    await utimes(path.join(clone, 'src/shared/routes.ts'), later, later);
    const { output, status } = await startAndAsk();
    expect(output).toContain(
      'src changed since the last build; set ARCHIVE_SOURCE=/path/to/oscars.csv to rebuild dist/ with it',
    );
    expect(output).not.toContain('building:');
    expect(status).toBe(200);
  });

  it('refuses to build the sample over it when its manifest is cut in half, and npm start refuses too, dist/ left whole', async () => {
    const manifestFile = path.join(dist, MANIFEST_PATH);
    const manifest = await readFile(manifestFile);
    await writeFile(manifestFile, manifest.subarray(0, manifest.length >> 1));
    try {
      const before = await treeDigest(dist);
      const { code, stderr } = await buildCommand([]);
      expect(code).toBe(1);
      expect(stderr.trimEnd().split('\n')).toEqual([
        'build failed: refusing to build: dist/ holds an archive of 12137 nominations by its summary (its manifest is missing or damaged; 97 ceremony years, 1929-2026) ' +
          'and no source was given, so this build would replace it with the small sample; ' +
          'set ARCHIVE_SOURCE=/path/to/oscars.csv (or run npm run data:fetch) to rebuild it, or run again with --accept-changes to replace it.',
      ]);
      await expect(startServer({}, { cwd: clone })).rejects.toThrow(
        /exited 1:[\s\S]*building: dist\/'s manifest is missing or damaged[\s\S]*npm start: refusing to build: dist\/ holds an archive of 12137 nominations/,
      );
      expect(await treeDigest(dist)).toEqual(before);
    } finally {
      await writeFile(manifestFile, manifest);
    }
  });

  it('replaces it with the sample when the build is run with --accept-changes', async () => {
    const { code, stdout } = await buildCommand(['--accept-changes']);
    expect(code).toBe(0);
    expect(stdout).toContain('SMALL SAMPLE');
    expect(await heldSource()).toMatchObject({ sample: true });
  });

  it('npm start rebuilds once after a change that leaves every answer the same, then serves what it built', async () => {
    // Touched, not edited (routes.ts back from the future an earlier test gave it): the build makes the same bytes.
    const now = new Date();
    for (const file of ['src/shared/routes.ts', 'src/shared/limits.ts']) await utimes(path.join(clone, file), now, now);
    expect((await startAndAsk()).output).toContain('building: src changed since the last build');
    expect((await startAndAsk()).output).not.toContain('building:');
  });

  it('npm start then rebuilds the sample when the code changed, and says it serves the sample', async () => {
    const later = new Date(Date.now() + 180_000);
    await utimes(path.join(clone, 'src/shared/routes.ts'), later, later);
    const { output, status } = await startAndAsk();
    expect(output).toContain('building: src changed since the last build');
    expect(output).toMatch(/serving the SMALL SAMPLE \(\d+ nominations; 3 ceremony years/);
    expect(status).toBe(404); // Meryl Streep is not in the sample's three years
  });
});
