import { execFile } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeEach, describe, expect, it } from 'vitest';
import { build } from '../../build/build.ts';
import { BuildRefused } from '../../build/refused.ts';
import { DIST_SUMMARY_PATH } from '../../build/dist-state.ts';
import { LAYOUT_FORMAT } from '../../src/shared/types.ts';
import { ROOT, SAMPLE_SOURCE } from '../helpers/paths.ts';
import { tempDir, treeDigest } from '../helpers/temp.ts';

const MINI = await readFile(path.join(ROOT, 'test/fixtures/mini.tsv'), 'utf8');
const lines = MINI.trimEnd().split('\n');
const variant = (rows: string[]) => `${rows.join('\n')}\n`;

let dir: string;
let out: string;
let summary: string;
let logs: string[];

async function buildFrom(text: string, acceptChanges = false) {
  const source = path.join(dir, `source-${Math.random().toString(36).slice(2)}.tsv`);
  await writeFile(source, text);
  logs = [];
  return build({ source, out, summary, acceptChanges, log: (l) => logs.push(l) });
}

async function refused(text: string) {
  const before = await treeDigest(out);
  const summaryBefore = await readFile(summary, 'utf8');
  const error = await buildFrom(text).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BuildRefused);
  expect(await treeDigest(out)).toEqual(before);
  expect(await readFile(summary, 'utf8')).toBe(summaryBefore);
  return (error as Error).message;
}

beforeEach(async () => {
  dir = await tempDir('guard');
  out = path.join(dir, 'dist');
  summary = path.join(dir, 'summary.json');
  await buildFrom(MINI); // first build writes the summary
});

describe('the yearly-update guard', () => {
  it('refuses a source with one year removed and leaves dist untouched', async () => {
    await refused(variant(lines.filter((l) => !l.startsWith('10\t'))));
    expect(logs.join('\n')).toContain('years REMOVED: 1938');
  });

  it('refuses a source with one nomination removed', async () => {
    await refused(variant(lines.filter((_, i) => i !== 1)));
    expect(logs.join('\n')).toMatch(/1929: 1 nomination\(s\) REMOVED/);
  });

  it('refuses a source with a winner turned into a loss', async () => {
    await refused(variant(lines.map((l, i) => (i === 2 ? l.replace('\tTrue\t', '\t\t') : l))));
    expect(logs.join('\n')).toMatch(/1929: 1 win\(s\) TURNED INTO LOSSES/);
  });

  it('refuses a source truncated mid-line, naming the line', async () => {
    const message = await refused(MINI.slice(0, MINI.length - 15));
    expect(message).toMatch(/line 12: truncated/);
  });

  it('reports an added year, builds, and records it only with --accept-changes', async () => {
    const added = variant([
      ...lines,
      '11\t1938\tActing\tACTOR IN A LEADING ROLE\tACTOR\tFilm Z\t\tNew Actor\tNew Actor',
    ]);
    const before = await readFile(summary, 'utf8');
    await buildFrom(added);
    expect(logs.join('\n')).toContain('years added: 1939');
    expect(await readFile(summary, 'utf8')).toBe(before);
    const manifest = JSON.parse(await readFile(path.join(out, '_data/manifest.json'), 'utf8'));
    expect(Object.keys(manifest.years)).toContain('1939');

    await buildFrom(added, true);
    expect(Object.keys(JSON.parse(await readFile(summary, 'utf8')))).toContain('1939');
    await buildFrom(added);
    expect(logs.join('\n')).not.toContain('years added');
  });

  it('reports winners being set and accepts them', async () => {
    await buildFrom(variant(lines.map((l, i) => (i === 1 ? l.replace('nm1\t\t', 'nm1\tTrue\t') : l))), true);
    expect(logs.join('\n')).toMatch(/1929: 1 win\(s\) set/);
  });

  it('accepts a loss when run with --accept-changes, and rewrites the summary', async () => {
    await buildFrom(variant(lines.filter((l) => !l.startsWith('10\t'))), true);
    expect(Object.keys(JSON.parse(await readFile(summary, 'utf8')))).not.toContain('1938');
  });

  it('stops the command line build with one clear line and exit code 1', async () => {
    const bad = path.join(dir, 'bad.tsv');
    await writeFile(bad, MINI.replace('\nTitle', '\nTitle').replace('\t1928/29\tTitle', '\t1928/29\tNonsense'));
    const run = promisify(execFile)(
      process.execPath,
      ['build/build.ts', '--source', bad, '--out', out, '--summary', summary],
      { cwd: ROOT },
    );
    const error = (await run.then(
      () => null,
      (e: unknown) => e,
    )) as { code: number; stderr: string };
    expect(error.code).toBe(1);
    expect(error.stderr.trim()).toMatch(
      /^build failed: malformed source, nothing written: source line 4: unknown Class "Nonsense"/,
    );
  });
});

describe('the guard against what dist/ holds', () => {
  /** A second checkout's view: a committed summary that never saw the archive in dist/. */
  async function freshSummary(): Promise<string> {
    const file = path.join(dir, `fresh-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(file, '{}\n');
    return file;
  }

  it('records what dist/ holds beside the data, the same summary the build commits', async () => {
    expect(await readFile(path.join(out, DIST_SUMMARY_PATH), 'utf8')).toBe(await readFile(summary, 'utf8'));
  });

  it('refuses a source that would lose a year dist/ holds, even when the committed summary never saw it', async () => {
    summary = await freshSummary();
    const message = await refused(variant(lines.filter((l) => !l.startsWith('10\t'))));
    expect(message).toMatch(
      /^refusing to build: this source would lose data that .*dist\/ holds \(see the changes above\); .*--accept-changes\.$/,
    );
    expect(logs.join('\n')).toMatch(/holds:\n {2}years REMOVED: 1938/);
  });

  it('replaces dist/ with that source when run with --accept-changes', async () => {
    summary = await freshSummary();
    await buildFrom(variant(lines.filter((l) => !l.startsWith('10\t'))), true);
    const manifest = JSON.parse(await readFile(path.join(out, '_data/manifest.json'), 'utf8'));
    expect(Object.keys(manifest.years)).not.toContain('1938');
  });

  it('lets any archive replace a dist/ holding the sample, which nobody relies on', async () => {
    await build({ source: SAMPLE_SOURCE, out, summary: await freshSummary(), acceptChanges: true, log: () => {} });
    summary = await freshSummary();
    await buildFrom(MINI); // none of the sample's 2026 ceremony, and a 1930 without its rows
    const manifest = JSON.parse(await readFile(path.join(out, '_data/manifest.json'), 'utf8'));
    expect(manifest.source.sample).toBe(false);
    expect(Object.keys(manifest.years)).not.toContain('2026');
  });

  it('rebuilds a dist/ whose manifest or summary is damaged, rather than stopping on it', async () => {
    await writeFile(path.join(out, DIST_SUMMARY_PATH), '{"1929": ');
    summary = await freshSummary();
    await buildFrom(MINI, true);
    await writeFile(path.join(out, '_data/manifest.json'), '{"format": 4, "sou');
    summary = await freshSummary();
    await buildFrom(MINI);
    expect(JSON.parse(await readFile(path.join(out, '_data/manifest.json'), 'utf8')).format).toBe(LAYOUT_FORMAT);
  });

  it('compares by row count with a dist/ built before the build recorded its summary', async () => {
    await rm(path.join(out, DIST_SUMMARY_PATH));
    summary = await freshSummary();
    const message = await refused(variant(lines.filter((_, i) => i !== 1)));
    expect(message).toContain('would lose data that');
    expect(logs.join('\n')).toMatch(/1 nomination\(s\) fewer than the \d+ it holds/);
  });
});
