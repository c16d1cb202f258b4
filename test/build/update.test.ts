/**
 * npm run data:update against a local HTTP server serving revisions the tests
 * make from the real file at test time (a new 2027 ceremony, a year removed,
 * a winner flipped, a ceremony with nominations only, a file that does not
 * parse, a server that never answers) and a stand-in for GitHub's REST API.
 * Every update works on a temp copy of data/ and a temp CHANGELOG.md; the
 * expected counts are counted from the file's raw lines, not by the importer.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../../build/build.ts';
import { describeDist, readDist } from '../../build/dist-state.ts';
import { update, type UpdateOptions } from '../../build/update/update.ts';
import { createApi } from '../../src/api/handler.ts';
import { Keys } from '../../src/keys/rules.ts';
import { DiskData } from '../../adapters/_node/disk-data.ts';
import { makeKeys, memoryKeys } from '../helpers/keys.ts';
import { FULL_SOURCE, ROOT } from '../helpers/paths.ts';
import { tempDir } from '../helpers/temp.ts';

const run = promisify(execFile);
const sha256 = (bytes: string | Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const n = (x: number) => x.toLocaleString('en-US');

// ---- revisions made from the real file, line by line ----
const real = readFileSync(FULL_SOURCE, 'utf8');
const [header, ...rows] = real.slice(0, -1).split('\n');
const fields = (row: string) => row.split('\t');
const ceremony = (row: string) => fields(row)[0];
const withField = (row: string, at: number, value: string) => {
  const f = fields(row);
  while (f.length <= at) f.push('');
  f[at] = value;
  return f.join('\t');
};
const WINNER = 10;
const file = (lines: string[]) => `${[header, ...lines].join('\n')}\n`;
const last = rows.filter((r) => ceremony(r) === '98');
/** The 98th ceremony again as the 99th (film year 2026, held 2027). */
const as99 = last.map((r) => withField(withField(r, 0, '99'), 1, '2026'));

const REVISIONS: Record<string, string> = {
  '/with-2027.csv': file([...rows, ...as99]),
  '/without-2025.csv': file(rows.filter((r) => ceremony(r) !== '97')),
  '/nominations-only-2027.csv': file([...rows, ...as99.map((r) => withField(r, WINNER, ''))]),
  '/winner-flipped.csv': file(flipBestPicture(rows)),
  '/unparseable.csv': file(rows.map((r, i) => (i === 5000 ? withField(r, 0, 'XCVIII') : r))),
};

/** The 2026 Best Picture winner loses and the first other nominee wins. */
function flipBestPicture(lines: string[]): string[] {
  const picture = (r: string) => ceremony(r) === '98' && fields(r)[3] === 'BEST PICTURE';
  const winner = lines.findIndex((r) => picture(r) && fields(r)[WINNER] === 'True');
  const other = lines.findIndex((r) => picture(r) && fields(r)[WINNER] !== 'True');
  return lines.map((r, i) =>
    i === winner ? withField(r, WINNER, '') : i === other ? withField(r, WINNER, 'True') : r,
  );
}

// ---- the local server: revisions, a path that never answers, and GitHub's API ----
const COMMIT = 'f'.repeat(8) + createHash('sha1').update('2027').digest('hex').slice(8);
const COMMIT_DATE = '2027-03-22T18:04:11Z';
const asked: { url: string; authorization?: string; accept?: string }[] = [];
let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    asked.push({ url: req.url!, authorization: req.headers.authorization, accept: req.headers.accept });
    const url = new URL(req.url!, 'http://x');
    if (url.pathname === '/never') return; // holds the request open: the update must give up
    if (url.pathname === '/api/repos/DLu/oscar_data/commits' && url.searchParams.get('path') === 'oscars.csv') {
      res.setHeader('content-type', 'application/json');
      return res.end(JSON.stringify([{ sha: COMMIT, commit: { committer: { date: COMMIT_DATE } } }]));
    }
    if (url.pathname === '/api/repos/DLu/oscar_data/contents/oscars.csv' && url.searchParams.get('ref') === COMMIT) {
      return res.end(REVISIONS['/with-2027.csv']);
    }
    const body = REVISIONS[url.pathname];
    res.statusCode = body ? 200 : 404;
    res.end(body ?? 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

// ---- a checkout's data/ and CHANGELOG.md in a temp folder ----
const CHANGELOG =
  '# Changelog\n\n## [Unreleased]\n\n### Added\n\n- Something else entirely.\n\n## [1.0.0] - 2026-05-01\n\n- First release.\n';

/** A temp checkout pinned to the real file (cached), with the committed summary and a changelog. */
async function checkout(source = FULL_SOURCE, pin: Record<string, unknown> = {}): Promise<string> {
  const root = await tempDir('update');
  await mkdir(path.join(root, 'data/cache'), { recursive: true });
  const committed = JSON.parse(await readFile(path.join(ROOT, 'data/source.json'), 'utf8'));
  const bytes = await readFile(source);
  await writeFile(
    path.join(root, 'data/source.json'),
    JSON.stringify({ ...committed, sha256: sha256(bytes), bytes: bytes.length, ...pin }, null, 2),
  );
  await copyFile(source, path.join(root, 'data/cache/oscars.csv'));
  await copyFile(path.join(ROOT, 'data/archive-summary.json'), path.join(root, 'data/archive-summary.json'));
  await writeFile(path.join(root, 'CHANGELOG.md'), CHANGELOG);
  return root;
}

const WRITTEN = ['data/source.json', 'data/cache/oscars.csv', 'data/archive-summary.json', 'CHANGELOG.md'];
const snapshot = async (root: string) => Promise.all(WRITTEN.map((f) => readFile(path.join(root, f), 'utf8')));

/** Runs the update quietly, keeping what it printed. */
async function updateIn(root: string, options: UpdateOptions = {}) {
  const printed: string[] = [];
  const warned: string[] = [];
  const result = await update({
    root,
    env: {},
    log: (l) => printed.push(l),
    warn: (l) => warned.push(l),
    timeoutMs: 10_000,
    ...options,
  });
  return { ...result, printed: printed.join('\n'), warned: warned.join('\n') };
}

describe('a revision with a new 2027 ceremony', () => {
  it('is reported with its categories, nominations and winners, counted from the raw lines, and pinned', async () => {
    const root = await checkout();
    const out = await updateIn(root, { from: `${base}/with-2027.csv`, now: () => new Date('2027-03-23T09:00:00Z') });
    const categories = new Set(last.map((r) => fields(r)[4])).size;
    const winners = last.filter((r) => fields(r)[WINNER] === 'True').length;
    const allWinners = rows.filter((r) => fields(r)[WINNER] === 'True').length;
    expect(out.exitCode).toBe(0);
    expect(out.status).toBe('pinned');
    expect(out.report).toContain(
      `- 2027 (99th ceremony): ${categories} categories, ${last.length} nominations, ${winners} winners`,
    );
    expect(out.report).toContain(`- nominations: ${n(rows.length)} → ${n(rows.length + last.length)}`);
    expect(out.report).toContain(`- winners: ${n(allWinners)} → ${n(allWinners + winners)}`);
    expect(out.report).toContain('- ceremony years: 97 → 98 (1929–2026 → 1929–2027)');
    expect(out.report!.split('\n')[0]).toBe(
      `Source: oscars.csv of DLu/oscar_data, c5e9716b7e02 (2026-04-22) → sha256 ${sha256(REVISIONS['/with-2027.csv']).slice(0, 12)} (pinned 2027-03-23)`,
    );
    for (const kind of [
      'nominations added',
      'nominations removed',
      'nominations changed',
      'winners changed',
      'categories renamed',
    ]) {
      expect(out.report).toContain(`- ${kind}: none`);
    }

    const pin = JSON.parse(await readFile(path.join(root, 'data/source.json'), 'utf8'));
    const bytes = Buffer.from(REVISIONS['/with-2027.csv']);
    expect(pin).toMatchObject({
      url: `${base}/with-2027.csv`,
      sha256: sha256(bytes),
      bytes: bytes.length,
      commit: null,
      pinnedAt: '2027-03-23T09:00:00.000Z',
    });
    expect(sha256(await readFile(path.join(root, 'data/cache/oscars.csv')))).toBe(sha256(bytes));
    const summary = JSON.parse(await readFile(path.join(root, 'data/archive-summary.json'), 'utf8'));
    expect(summary['2027'].nominations).toBe(last.length);
  });

  it('is appended to CHANGELOG.md under Data in the Unreleased release, leaving the rest of the file as it was', async () => {
    const root = await checkout();
    const out = await updateIn(root, { from: `${base}/with-2027.csv`, now: () => new Date('2027-03-23T09:00:00Z') });
    const changelog = await readFile(path.join(root, 'CHANGELOG.md'), 'utf8');
    const entry = `### Data\n\n#### 2027-03-23: oscars.csv sha256 ${sha256(REVISIONS['/with-2027.csv']).slice(0, 12)}\n\n${out.report!.trimEnd()}`;
    expect(changelog).toBe(CHANGELOG.replace('\n\n## [1.0.0]', `\n\n${entry}\n\n## [1.0.0]`));
  });

  it('taken from a file with --commit, is pinned with that commit and its raw URL, so a deploy can download it', async () => {
    const root = await checkout();
    const local = path.join(await tempDir('update-file'), 'oscars.csv');
    await writeFile(local, REVISIONS['/with-2027.csv']);
    expect((await updateIn(root, { from: local, commit: COMMIT })).status).toBe('pinned');
    const pin = JSON.parse(await readFile(path.join(root, 'data/source.json'), 'utf8'));
    expect(pin).toMatchObject({
      commit: COMMIT,
      url: `https://raw.githubusercontent.com/DLu/oscar_data/${COMMIT}/oscars.csv`,
    });
    await expect(updateIn(root, { from: local, commit: 'main' })).rejects.toThrow(
      /--commit must be a full 40-digit commit hash/,
    );
  });

  it('is found through the GitHub API stand-in, with the token sent, and pinned with its commit, date and raw URL', async () => {
    const root = await checkout();
    asked.length = 0;
    const out = await updateIn(root, { env: { GITHUB_API_URL: `${base}/api`, GITHUB_TOKEN: 'ghs_test' } });
    expect(out.status).toBe('pinned');
    expect(asked.map((a) => a.url)).toEqual([
      '/api/repos/DLu/oscar_data/commits?path=oscars.csv&per_page=1',
      `/api/repos/DLu/oscar_data/contents/oscars.csv?ref=${COMMIT}`,
    ]);
    expect(asked.every((a) => a.authorization === 'Bearer ghs_test')).toBe(true);
    expect(asked[1].accept).toBe('application/vnd.github.raw+json');
    const pin = JSON.parse(await readFile(path.join(root, 'data/source.json'), 'utf8'));
    expect(pin).toMatchObject({
      commit: COMMIT,
      date: COMMIT_DATE,
      url: `https://raw.githubusercontent.com/DLu/oscar_data/${COMMIT}/oscars.csv`,
    });
    expect(out.report).toContain(`c5e9716b7e02 (2026-04-22) → ${COMMIT.slice(0, 12)} (2027-03-22)`);

    // Pinned: asked again, GitHub names the same commit, and nothing is downloaded or written.
    const before = await snapshot(root);
    asked.length = 0;
    const again = await updateIn(root, { env: { GITHUB_API_URL: `${base}/api` } });
    expect(again).toMatchObject({ status: 'current', exitCode: 0, report: null });
    expect(asked).toHaveLength(1);
    expect(await snapshot(root)).toEqual(before);
  });

  it('is what npm run build then serves: the year 2027, and the commit and date at / (JSON and page) and in the OpenAPI info', async () => {
    const root = await checkout();
    await updateIn(root, { env: { GITHUB_API_URL: `${base}/api` } });
    const out = path.join(await tempDir('update-dist'), 'dist');
    await build({
      source: path.join(root, 'data/cache/oscars.csv'),
      out,
      summary: path.join(root, 'data/archive-summary.json'),
      pin: path.join(root, 'data/source.json'),
      log: () => {},
    });
    const { keys, records } = makeKeys(1);
    const api = createApi({ data: new DiskData(out), keys: new Keys(memoryKeys(records)) });
    const get = (url: string) =>
      api.handle(new Request(`http://localhost${url}`, { headers: { accept: 'application/json' } }));
    const year = await get(`/archive/year=2027/apikey=${keys[0]}`);
    expect(year.status).toBe(200);
    expect((await year.json()).map((c: { category: string }) => c.category)).toHaveLength(
      new Set(last.map((r) => fields(r)[4])).size,
    );
    const described = await (await get('/')).json();
    expect(described.source).toMatchObject({ repository: 'DLu/oscar_data', commit: COMMIT, date: COMMIT_DATE });
    expect(described.description).toContain('1929 to 2027');
    const openapi = JSON.parse(await readFile(path.join(out, 'openapi.json'), 'utf8'));
    expect(openapi.info['x-source']).toMatchObject({ commit: COMMIT, date: COMMIT_DATE });
    expect(openapi.info.description).toContain(`at commit \`${COMMIT}\` (${COMMIT_DATE})`);
    expect(await readFile(path.join(out, 'index.html'), 'utf8')).toContain(
      `of DLu/oscar_data at commit <code>${COMMIT.slice(0, 12)}</code>, 2027-03-22.</footer>`,
    );
  });
});

describe('a revision that loses data', () => {
  it('without 2025 is refused with exit 1, naming 2025, and nothing is written', async () => {
    const root = await checkout();
    const before = await snapshot(root);
    const out = await updateIn(root, { from: `${base}/without-2025.csv` });
    expect(out).toMatchObject({ status: 'refused', exitCode: 1 });
    expect(out.warned).toMatch(/^data:update: refused: .*ceremonies removed in 2025.*--accept-changes$/);
    expect(out.report).toContain(`- 2025 (97th ceremony): `);
    expect(out.report).toContain('- ceremony years: 97 → 96');
    expect(await snapshot(root)).toEqual(before);
  });

  it('with the 2026 Best Picture winner flipped is refused, naming 2026, and shows both changed winners', async () => {
    const root = await checkout();
    const before = await snapshot(root);
    const out = await updateIn(root, { from: `${base}/winner-flipped.csv` });
    expect(out).toMatchObject({ status: 'refused', exitCode: 1 });
    expect(out.warned).toContain('winners lost in 2026');
    expect(out.report).toMatch(
      /- winners changed: 2 \(2026\)\n {2}- 2026 · Best Picture: .+: (won → lost|lost → won)\n {2}- 2026 · Best Picture: .+: (won → lost|lost → won)\n/,
    );
    expect(await snapshot(root)).toEqual(before);
  });

  it('is pinned with --accept-changes, the loss still in the report', async () => {
    const root = await checkout();
    const out = await updateIn(root, { from: `${base}/without-2025.csv`, acceptChanges: true });
    expect(out).toMatchObject({ status: 'pinned', exitCode: 0 });
    expect(out.report).toContain('**Losses:** ceremonies removed in 2025');
    const summary = JSON.parse(await readFile(path.join(root, 'data/archive-summary.json'), 'utf8'));
    expect(Object.keys(summary)).not.toContain('2025');
  });
});

describe('a new ceremony with nominations and no winners yet', () => {
  it('is refused without --nominations-only, and pinned with it, the report saying so loudly', async () => {
    const root = await checkout();
    const before = await snapshot(root);
    const refused = await updateIn(root, { from: `${base}/nominations-only-2027.csv` });
    expect(refused).toMatchObject({ status: 'refused', exitCode: 1 });
    expect(refused.warned).toMatch(/2027 has nominations but no winners yet.*--nominations-only/);
    expect(await snapshot(root)).toEqual(before);
    const pinned = await updateIn(root, { from: `${base}/nominations-only-2027.csv`, nominationsOnly: true });
    expect(pinned.status).toBe('pinned');
    expect(pinned.report).toContain(
      `- 2027 (99th ceremony): ${new Set(last.map((r) => fields(r)[4])).size} categories, ${last.length} nominations, 0 winners`,
    );
    expect(pinned.report).toContain('**NOMINATIONS ONLY: 2027 has nominations but NO WINNERS yet.**');
  });
});

describe('an update that cannot be done', () => {
  it('stops on a file that does not parse, naming its line, and writes nothing', async () => {
    const root = await checkout();
    const before = await snapshot(root);
    await expect(updateIn(root, { from: `${base}/unparseable.csv` })).rejects.toThrow(
      /does not parse \(source line 5002: Ceremony must be a positive whole number, found "XCVIII"\); nothing written/,
    );
    expect(await snapshot(root)).toEqual(before);
  });

  it('gives up on a server that never answers within the timeout, and writes nothing', async () => {
    const root = await checkout();
    const before = await snapshot(root);
    await expect(updateIn(root, { from: `${base}/never`, timeoutMs: 300 })).rejects.toThrow(
      /cannot download the new revision from .*\/never \(no whole answer within 0.3 s\); nothing written/,
    );
    await expect(updateIn(root, { env: { GITHUB_API_URL: `${base}/missing` } })).rejects.toThrow(
      /cannot download the newest revision of oscars.csv .*\(HTTP 404\)/,
    );
    expect(await snapshot(root)).toEqual(before);
  });
});

describe('an accepted update and the build guard', () => {
  it('lets the next build replace a dist/ that holds the pinned revision without --accept-changes', async () => {
    // A small pinned revision (the last three ceremonies), built into dist/ as a deploy would hold it.
    const small = path.join(await tempDir('update-small'), 'oscars.csv');
    await writeFile(small, file(rows.filter((r) => Number(ceremony(r)) >= 96)));
    const root = await checkout(small, { commit: '1'.repeat(40), date: '2026-04-22T16:49:34Z' });
    const summary = path.join(root, 'data/archive-summary.json');
    const cache = path.join(root, 'data/cache/oscars.csv');
    const out = path.join(await tempDir('update-dist'), 'dist');
    const quiet = { out, summary, pin: path.join(root, 'data/source.json'), log: () => {} };
    await build({ ...quiet, source: cache, acceptChanges: true });

    const smaller = file(rows.filter((r) => Number(ceremony(r)) >= 96 && ceremony(r) !== '97'));
    REVISIONS['/small-without-2025.csv'] = smaller;
    const refused = await updateIn(root, { from: `${base}/small-without-2025.csv` });
    expect(refused.warned).toContain('ceremonies removed in 2025');
    expect((await updateIn(root, { from: `${base}/small-without-2025.csv`, acceptChanges: true })).status).toBe(
      'pinned',
    );

    await build({ ...quiet, source: cache });
    const manifest = JSON.parse(await readFile(path.join(out, '_data/manifest.json'), 'utf8'));
    expect(Object.keys(manifest.years)).toEqual(['2024', '2026']);
    expect(manifest.source).toMatchObject({ sha256: sha256(smaller), revision: { commit: null } });
    // npm start names what it serves from what the build recorded, a pin without a commit included.
    expect(describeDist((await readDist(out))!)).toMatch(
      /^the full archive, revision of unknown commit, pinned \d{4}-\d\d-\d\d \(/,
    );
    // Any other source that loses what dist/ holds is still refused.
    await writeFile(small, file(rows.filter((r) => ceremony(r) === '98')));
    await expect(build({ ...quiet, source: small })).rejects.toThrow(/refusing to build/);
  });
});

describe('the command line', () => {
  const command = (args: string[], env: Record<string, string> = {}) =>
    run(process.execPath, [path.join(ROOT, 'build/update/update.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, ARCHIVE_SOURCE: '', ...env },
    }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );

  it('answers --help with its usage and exit 0, asking nobody', async () => {
    asked.length = 0;
    const out = await command(['--help'], { GITHUB_API_URL: `${base}/api` });
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^usage: npm run data:update -- \[--from URL\|PATH/);
    expect(asked).toEqual([]);
  });

  it('refuses an unknown option in one line, exit 2', async () => {
    const out = await command(['--acept-changes']);
    expect(out.code).toBe(2);
    expect(out.stderr.trim()).toBe("data:update: Unknown option '--acept-changes'; see --help");
  });

  it('pins a revision with a new ceremony and prints the report; refuses one missing a year with exit 1, the pin unchanged', async () => {
    const root = await checkout();
    const added = await command(['--root', root, '--from', `${base}/with-2027.csv`]);
    expect(added.code).toBe(0);
    expect(added.stdout).toContain('- 2027 (99th ceremony): ');
    const pin = await readFile(path.join(root, 'data/source.json'), 'utf8');
    const missing = await command(['--root', root, '--from', `${base}/without-2025.csv`]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/ceremonies removed in 2025/);
    expect(await readFile(path.join(root, 'data/source.json'), 'utf8')).toBe(pin);
  });

  it('says in one line, exit 2, what to do about a file that does not parse', async () => {
    const root = await checkout();
    const out = await command(['--root', root, '--from', `${base}/unparseable.csv`]);
    expect(out.code).toBe(2);
    expect(out.stderr.trim().split('\n')).toHaveLength(1);
    expect(out.stderr).toMatch(/^data:update: .*does not parse.*pass --from a corrected file/);
  });
});
