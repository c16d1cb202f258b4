/**
 * npm run build: source -> archive -> yearly-update guard -> every answer
 * precomputed into dist/, swapped in atomically.
 *
 *   node build/build.ts [--source PATH] [--out DIR] [--summary FILE] [--accept-changes] [--no-cache]
 *
 * `npm run build` runs it with --no-turbofan: a build is a few seconds of code
 * run once, which V8's optimizing compiler spent about 1.3 s of CPU (on its
 * own threads, so on this machine's two cores) compiling for no gain; its
 * baseline compilers (Sparkplug, Maglev) run it as fast.
 */
import { createHash } from 'node:crypto';
import module from 'node:module';
import path from 'node:path';
import fs from 'fs-extra';
import { commandLine } from '../lib/command-line.ts';
import { compare, describe, formatSummary, summarize } from './archive/guard.ts';
import { importArchive, ImportError } from './archive/import.ts';
import { nodeFs, writeOutput, type BuildFs } from './output.ts';
import { exampleAnswers } from './site/examples.ts';
import { searchFile } from './answers/dataset.ts';
import { datasetApart, type DatasetApart } from './answers/dataset-worker.ts';
import { buildArtifacts } from './answers/artifacts.ts';
import { recordsApart, type RecordsApart } from './answers/records-worker.ts';
import { rowsApart } from './answers/apart.ts';
import { pruneGzipCache } from './answers/gzip-cache.ts';
import { codeFingerprint, stageKey, type StageMemo } from './answers/stage-cache.ts';
import { nominationIds, things } from './answers/things.ts';
import { publicFiles } from './site/public.ts';
import { BuildRefused } from './refused.ts';
import { DIST_SUMMARY_PATH, describeDist, readDist, type DistState } from './dist-state.ts';
import {
  pinnedRevision,
  resolveSource,
  ROOT,
  SAMPLE_FILE,
  SourceError,
  type ResolvedSource,
} from './archive/source.ts';
import type { ArchiveSummary, SourceRevision } from '../src/shared/types.ts';

export interface BuildOptions {
  source?: string;
  out?: string;
  summary?: string;
  acceptChanges?: boolean;
  fs?: BuildFs;
  log?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
  /** The source pin (data/source.json) that names the revision built, when the source is that revision. */
  pin?: string;
  /** Where packs' gzip is remembered by content (build/answers/gzip-cache.ts); default GZIP_CACHE, false for none. */
  gzipCache?: string | false;
  /** Where the worker threads' stages are remembered (build/answers/stage-cache.ts); default STAGE_CACHE, false for none. */
  stageCache?: string | false;
}

/** The packs' gzip by content, kept between builds: a rebuild of the same source gzips nothing again. */
export const GZIP_CACHE = path.join(ROOT, 'node_modules/.cache/build-gzip');

/** The dataset and the records as made by the last builds, by source and code: a rebuild of the same makes neither again. */
export const STAGE_CACHE = path.join(ROOT, 'node_modules/.cache/build-stages');

export interface BuildResult {
  files: number;
  /** The largest file written (a host may cap the size of one: Cloudflare Workers' free plan at 25 MiB). */
  largest: { path: string; bytes: number };
  bytes: { raw: number };
  ms: number;
  manifestBytes: number;
  sample: boolean;
}

const USAGE = `usage: npm run build -- [--source PATH] [--out DIR] [--summary FILE] [--accept-changes] [--no-cache]

Builds the archive from its source into every precomputed answer, the OpenAPI
document and the public pages, written beside DIR and swapped in whole. The
source is --source, else ARCHIVE_SOURCE, else the data:fetch cache
(data/cache/), else the small built-in sample, loudly. The build compares the
new archive with the summary and with what DIR holds, prints what changed, and
refuses (leaving DIR as it was) if a year or a nomination would disappear or a
win become a loss. A rebuild of the same source by the same code takes the
dataset, the search index and the records from the build cache
(node_modules/.cache/), as the last build made them.

  --source PATH      the source file (tab-separated: README.md, "Where the data comes from")
  --out DIR          where the build goes (default: dist/)
  --summary FILE     the committed summary to compare with and, with
                     --accept-changes, rewrite (default: data/archive-summary.json)
  --accept-changes   build and record the changes the guard would refuse
  --no-cache         make everything again, the build cache neither read nor written
  -h, --help         this text`;

/** Command line: prints the summary, or one clear line and exit code 1 (2 for a mistyped command line). */
export async function main(argv = process.argv.slice(2)): Promise<void> {
  const { values } = commandLine(
    {
      name: 'build',
      usage: USAGE,
      options: {
        source: { type: 'string' },
        out: { type: 'string' },
        summary: { type: 'string' },
        'accept-changes': { type: 'boolean', default: false },
        'no-cache': { type: 'boolean', default: false },
      },
    },
    argv,
  );
  try {
    await build({
      source: values.source,
      out: values.out,
      summary: values.summary,
      acceptChanges: values['accept-changes'],
      ...(values['no-cache'] ? { gzipCache: false, stageCache: false } : {}),
    });
  } catch (error) {
    process.exitCode = 1;
    // Run by npm start (build/prepare-dist.ts): a refusal is its to say, in its own words.
    if (error instanceof BuildRefused && process.send) {
      const refused = { refused: error.message };
      await new Promise((sent) => process.send!(refused, undefined, undefined, sent));
    } else console.error(`build failed: ${error instanceof BuildRefused ? error.message : (error as Error).stack}`);
  } finally {
    if (process.connected) process.disconnect();
  }
}

const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`;

/** The largest of the files about to be written, by path under the output folder. */
function largestFile(files: ReadonlyMap<string, Uint8Array>): { path: string; bytes: number } {
  let largest = { path: '', bytes: -1 };
  for (const [file, bytes] of files) if (bytes.length > largest.bytes) largest = { path: file, bytes: bytes.length };
  return largest;
}

/** How a message names the output folder: relative to where the command runs when inside it. */
function named(out: string): string {
  const relative = path.relative(process.cwd(), out);
  return `${relative && !relative.startsWith('..') ? relative : out}/`;
}

/** The source, or a refusal when none was given and `out` holds a real archive the sample would replace. */
async function chooseSource(options: BuildOptions, out: string, held: DistState | null): Promise<ResolvedSource> {
  let resolved;
  try {
    resolved = await resolveSource(options.source, options.env ?? process.env);
  } catch (error) {
    if (error instanceof SourceError) throw new BuildRefused(error.message);
    throw error;
  }
  if (resolved.via === 'sample' && held && !held.source.sample && !options.acceptChanges) {
    throw new BuildRefused(
      `refusing to build: ${named(out)} holds ${describeDist(held)} and no source was given, so this build would replace it with the small sample; ` +
        `set ARCHIVE_SOURCE=/path/to/oscars.csv (or run npm run data:fetch) to rebuild it, or run again with --accept-changes to replace it.`,
    );
  }
  return resolved;
}

/** The changes to the archive `out` holds, as lines, when `next` would lose some of it; empty otherwise. */
function lossAgainstDist(held: DistState | null, next: ArchiveSummary, rows: number): string[] {
  // The sample is a demonstration, not data anyone relies on: any archive may replace it.
  if (!held || held.source.sample) return [];
  // A dist/ built before the build recorded its summary: its row count is all there is to compare.
  if (!held.summary)
    return rows < held.source.rows
      ? [`${held.source.rows - rows} nomination(s) fewer than the ${held.source.rows} it holds`]
      : [];
  const comparison = compare(held.summary, next);
  return comparison.destructive ? describe(comparison) : [];
}

interface GuardInput {
  /** The committed summary's file and content. */
  summaryFile: string;
  previous: ArchiveSummary;
  /** What the output folder holds now. */
  held: DistState | null;
  next: ArchiveSummary;
  rows: number;
  out: string;
  acceptChanges?: boolean;
  /** Building the sample, whose summary is its own and so proves nothing about dist/. */
  sample: boolean;
}

/**
 * Whether the committed summary records exactly the archive being built: a
 * revision `npm run data:update` accepted (it rewrites the summary), so what
 * an older dist/ held may go without --accept-changes. Never for the sample.
 */
function recordedInSummary(g: GuardInput, comparison: ReturnType<typeof compare>): boolean {
  const same = !comparison.yearsAdded.length && !comparison.yearsRemoved.length && !comparison.changed.length;
  return same && !g.sample && Object.keys(g.previous).length > 0;
}

function logList(log: (line: string) => void, heading: string, lines: string[]): void {
  if (!lines.length) return;
  log(heading);
  for (const line of lines) log(`  ${line}`);
}

/**
 * The yearly-update guard: the new archive against the committed summary and
 * against what the output folder holds. Logs the changes and returns them;
 * throws BuildRefused on a loss unless accepted.
 */
function guard(g: GuardInput, log: (line: string) => void): string[] {
  const comparison = compare(g.previous, g.next);
  const changes = describe(comparison);
  logList(log, `changes against ${path.relative(process.cwd(), g.summaryFile) || g.summaryFile}:`, changes);
  const distLoss = lossAgainstDist(g.held, g.next, g.rows);
  logList(log, `changes against what ${named(g.out)} holds:`, distLoss);
  if (g.acceptChanges) return changes;
  if (comparison.destructive) {
    throw new BuildRefused(
      `refusing to build: this source would lose data the summary records (see the changes above). ` +
        `dist/ is untouched. If the loss is intended, run again with --accept-changes.`,
    );
  }
  if (distLoss.length && recordedInSummary(g, comparison)) {
    log(
      `the committed summary records exactly this archive (an accepted data:update), so it replaces what ${named(g.out)} holds`,
    );
  } else if (distLoss.length) {
    throw new BuildRefused(
      `refusing to build: this source would lose data that ${named(g.out)} holds (see the changes above); ` +
        `${named(g.out)} is untouched; if the loss is intended, run again with --accept-changes.`,
    );
  }
  return changes;
}

/** How a worker thread's stage came to be: `done` now, or taken from the stage cache. */
function made(ms: number, cached: boolean, done: string): string {
  return cached
    ? 'taken from the build cache, as an earlier build of this source by this code made them (--no-cache makes them again)'
    : `${done} in ${(ms / 1000).toFixed(2)} s on a worker thread`;
}

function logRecords(log: (line: string) => void, records: RecordsApart, cached: boolean): void {
  const r = records.stats;
  log(
    `records: ${r.films} films, ${r.people} people, ${r.companies} companies by IMDb id, ${records.count - r.films - r.people - r.companies - r.rankings} ceremonies and awards, ${r.rankings} rankings; ${r.countries} countries (no record); ` +
      `merged into the thing of their name with an id: ${r.merged.names} names (${r.merged.credits} credits), ${r.merged.films} film titles; ` +
      made(records.ms, cached, 'made and stored'),
  );
}

function warnSample(log: (line: string) => void): void {
  log('!!! ------------------------------------------------------------------------');
  log('!!! No ARCHIVE_SOURCE, no --source and no data/cache/oscars.csv: building the');
  log('!!! SMALL SAMPLE in data/sample/ (a few ceremonies), not the full archive.');
  log('!!! Set ARCHIVE_SOURCE=/path/to/oscars.csv or run npm run data:fetch.');
  log('!!! ------------------------------------------------------------------------');
}

export async function build(options: BuildOptions = {}): Promise<BuildResult> {
  const started = performance.now();
  const log = options.log ?? ((line: string) => console.log(line));
  const out = path.resolve(options.out ?? path.join(ROOT, 'dist'));
  const held = await readDist(out);
  const resolved = await chooseSource(options, out, held);
  if (resolved.via === 'sample') warnSample(log);
  log(`source: ${resolved.file} (via ${resolved.via})`);

  const text = await fs.readFile(resolved.file, 'utf8');
  // The sample is recorded as such however it was named, so that any archive may later replace it.
  const sample = resolved.file === SAMPLE_FILE;
  const sha256 = createHash('sha256').update(text).digest('hex');
  const revision = sample ? null : await pinnedRevision(sha256, options.pin);
  const stages = options.stageCache === false ? undefined : (options.stageCache ?? STAGE_CACHE);
  // What the worker threads make follows from the source, its revision and the code: a rebuild of the same takes it from the cache.
  const fingerprint = stages ? codeFingerprint(ROOT) : '';
  const memo = (stage: string) => ({ folder: stages, key: stageKey(stage, fingerprint, [sha256, sample, revision]) });
  // What this thread compiled (most of what the workers load: the search, the client) written to the compile cache
  // now, not at exit (lib/compile-cache.js): on a first build the workers read it rather than compile it again
  // (about 0.4 s of CPU over four builds each way).
  module.flushCompileCache?.();
  // The search index and the dataset are made on a worker thread from here (it imports the text too), the records on
  // another once the rows are; a failure there is heard where it is awaited, and a build failing first ends them.
  const building: Building = {
    options,
    log,
    out,
    held,
    resolved,
    started,
    text,
    sample,
    sha256,
    revision,
    memo,
    data: datasetApart({ text }, memo('dataset')),
    stops: [],
  };
  building.stops.push(building.data.stop);
  try {
    return await buildFrom(building);
  } finally {
    await Promise.all(building.stops.map((stop) => stop()));
  }
}

/** A build under way: what build() found, the source's text, and its worker threads (ended when it ends). */
interface Building {
  options: BuildOptions;
  log: (line: string) => void;
  out: string;
  held: DistState | null;
  resolved: ResolvedSource;
  started: number;
  text: string;
  sample: boolean;
  sha256: string;
  revision: SourceRevision | null;
  /** Where a worker thread's stage is remembered, and its key there (build/answers/stage-cache.ts). */
  memo: (stage: string) => StageMemo;
  data: DatasetApart;
  stops: (() => Promise<number>)[];
}

async function buildFrom(b: Building): Promise<BuildResult> {
  const { options, log, out, held, resolved, started, text, sample, sha256, revision } = b;
  let imported;
  try {
    imported = importArchive(text);
  } catch (error) {
    if (error instanceof ImportError) throw new BuildRefused(`malformed source, nothing written: ${error.message}`);
    throw error;
  }
  const { archive, stats, facts, rows } = imported;
  // The things the archive speaks of, told apart once: the lookups by id, the dataset and the records follow them.
  const model = things(rows);
  const ids = nominationIds(rows, model);
  log(
    `archive: ${Object.keys(archive).length} ceremony years, ${stats.rows} nominations from ${stats.ceremonies} ceremonies`,
  );
  const dropped = Object.entries(stats.notCarried)
    .map(([k, v]) => `${k} (${v} rows)`)
    .join(', ');
  if (dropped) log(`not part of the API shape, read and left out: ${dropped}`);

  const summaryFile = path.resolve(options.summary ?? resolved.summaryFile);
  const previous: ArchiveSummary = (await fs.pathExists(summaryFile)) ? await fs.readJson(summaryFile) : {};
  const next = summarize(archive);
  const changes = guard(
    { summaryFile, previous, held, next, rows: stats.rows, out, acceptChanges: options.acceptChanges, sample },
    log,
  );

  if (!sample)
    log(
      revision
        ? `revision: ${revision.repository} ${revision.commit ?? 'commit unknown'} (${revision.date ?? 'date unknown'})`
        : 'revision: not the one data/source.json pins, so unnamed',
    );
  log('storing every answer once, as sent: small ones packed');
  const source = { sha256, rows: stats.rows, sample, revision };
  b.data.go(source);
  const gzipCache = options.gzipCache === false ? undefined : (options.gzipCache ?? GZIP_CACHE);
  // The records' packs are kept whole in their stage's entry (stage-cache.ts): the gzip cache would keep them again, a
  // file each, and making those 235 files cost a first build about 0.2 s of CPU. Without a stage cache, it keeps them.
  const recordsMemo = b.memo('records');
  const recordsGzip = recordsMemo.folder ? undefined : gzipCache;
  const recording = recordsApart(() => ({ rows: rowsApart(rows, model), gzipCache: recordsGzip }), recordsMemo);
  b.stops.push(recording.apart.stop);
  const dataset = async (search: string[]) => {
    const { files, ms } = await b.data.files;
    const all = [...files, searchFile(search, source)];
    log(
      `dataset: ${all.map((f) => `${f.name} ${kib(f.bytes.length)}`).join(', ')}; ${made(ms, b.data.cached, 'tables made')}`,
    );
    return all;
  };
  const records = recording.apart.result.then((records) => (logRecords(log, records, recording.hit), records));
  const search = b.data.search;
  const artifacts = await buildArtifacts(archive, source, { ids, facts, dataset, records, search, gzipCache });
  log(`stored ${artifacts.files.size} files; answering each route's example for the reference page`);
  const examples = await exampleAnswers(artifacts.files, artifacts.manifest);
  for (const [file, bytes] of publicFiles(artifacts.manifest, process.env, examples)) artifacts.files.set(file, bytes);
  // What dist/ holds, for the next build's guard (served by nobody: `_data/` is the API's private prefix).
  artifacts.files.set(DIST_SUMMARY_PATH, new TextEncoder().encode(formatSummary(next)));
  log(`writing ${artifacts.files.size} files to ${named(out)}`);
  await writeOutput(out, artifacts.files, options.fs ?? nodeFs);
  if (gzipCache) await pruneGzipCache(gzipCache);
  await Promise.all([b.data.kept, recording.kept]);

  if (options.acceptChanges || !(await fs.pathExists(summaryFile))) {
    await fs.outputFile(summaryFile, formatSummary(next));
    log(`summary written: ${summaryFile}`);
  } else if (changes.length) {
    log('these changes are not yet recorded: run with --accept-changes to record them in the summary');
  }

  const bytes = artifacts.sizes;
  const ms = performance.now() - started;
  const manifestBytes = artifacts.files.get('_data/manifest.json')!.length;
  const largest = largestFile(artifacts.files);
  log(
    `built ${out}: ${artifacts.files.size} files, the largest ${largest.path} (${kib(largest.bytes)}); responses ${kib(bytes.raw)}; ` +
      `${artifacts.stats.names} names, ${artifacts.stats.nameYearPairs} name-year pairs, ${artifacts.stats.categoryNames} category names, ${artifacts.stats.ids} IMDb ids; ` +
      `manifest ${kib(manifestBytes)}; ${(ms / 1000).toFixed(2)} s`,
  );
  return { files: artifacts.files.size, largest, bytes, ms, manifestBytes, sample };
}
if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) await main();
