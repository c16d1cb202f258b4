/**
 * Search quality and speed: our search (`/search/name=…`, the index the
 * build writes, searched in-process as the runtime searches it) beside two
 * well-known libraries, fuse.js (a threshold of 0.4 anywhere in the name)
 * and MiniSearch (fuzzy 0.2, prefix), given the same names and the same
 * tie-break (more nominations first). The query set
 * (bench/search-queries.ts) is drawn afresh from the source at each run,
 * with five seeds chosen then and printed (`--seed N,…` repeats them), in
 * families, with what each query should find; this prints, per family and
 * engine, the mean and the worst over the seeds of the share whose first
 * result is that (top-1), whose first three hold it (top-3), and that find
 * nothing (for names never nominated, the share that find anything is the
 * failure), then the median and 99th percentile time of one search, warm,
 * in this process (fuse.js on a sample: it takes about 0.2 s a search).
 *
 *   npm run bench:search [-- --seeds 5 --per-family N --seed N --engines ours,fuse,minisearch]
 *
 * Needs the full archive: ARCHIVE_SOURCE, else data/cache (npm run data:fetch).
 */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import Fuse from 'fuse.js';
import MiniSearch from 'minisearch';
import { commandLine, refuser } from '../lib/command-line.ts';
import { importArchive } from '../build/archive/import.ts';
import { searchIndex } from '../build/answers/search-index.ts';
import { nominationIds } from '../build/answers/things.ts';
import { resolveSource } from '../build/archive/source.ts';
import { titleCaseCategory } from '../src/shared/category-name.ts';
import { searchOver, storedFiles } from '../src/shared/search.ts';
import {
  ALL,
  type Engine,
  FAMILIES,
  type Figures,
  type Found,
  plain,
  type Query,
  querySet,
  score,
  sourceFacts,
  type Thing,
} from './search-queries.ts';

const USAGE = `usage: npm run bench:search [-- --seeds K] [--seed N] [--per-family N] [--engines LIST]

Search quality (top-1, top-3, no result, per family of queries: the mean
and the worst over the seeds) and speed (median and p99 of one warm
search, in-process) of our search beside fuse.js and MiniSearch, on query
sets drawn from the archive with seeds chosen at each run and printed.

Options:
  --seeds K        query sets drawn, each with a fresh seed (default 5)
  --seed N[,N…]    draw the sets of these seeds (repeats a run's)
  --per-family N   drawn queries in each family (default 40)
  --engines LIST   comma-separated, of ours, fuse, minisearch (default all)
  -h, --help       this text`;

export function ours(source: string): Engine {
  // The ids as the build hands them over: each nomination's, as the things model places its names.
  const { archive, facts, rows } = importArchive(source);
  const stored = storedFiles(searchIndex(archive, facts, nominationIds(rows)));
  const size = (text: string) => new TextEncoder().encode(text).length;
  console.log(
    `our index: ${stored.reduce((n, text) => n + size(text), 0)} bytes in ${stored.length} files, the core ${size(stored[0])}`,
  );
  return searchOver(stored);
}

/** MiniSearch over the same things and category names, fuzzy 0.2 and prefix, ties by more nominations. */
export function library(things: Thing[], categories: Map<string, string>): Engine {
  const docs: (Found & { weight: number; text: string; year: string })[] = [
    ...things.map((t) => ({
      name: t.name,
      kind: t.kind,
      id: t.id,
      weight: t.weight,
      text: t.name,
      year: t.filmYear ?? '',
    })),
    ...[...categories.keys()].map((name) => ({ name, kind: 'category', weight: 0, text: name, year: '' })),
  ];
  const search = new MiniSearch({
    idField: 'n',
    fields: ['text', 'year'],
    processTerm: (term) => plain(term),
  });
  search.addAll(docs.map((d, n) => ({ n, text: d.text, year: d.year })));
  return (text) =>
    search
      .search(text, { fuzzy: 0.2, prefix: true })
      .sort((a, b) => b.score - a.score || docs[b.id as number].weight - docs[a.id as number].weight)
      .slice(0, 10)
      .map((r) => docs[r.id as number]);
}

/** fuse.js over the same things and category names, unaccented, a match anywhere in the name (threshold 0.4), ties by more nominations. */
export function fuse(things: Thing[], categories: Map<string, string>): Engine {
  const docs = [
    ...things.map((t) => ({ name: t.name, kind: t.kind, id: t.id, weight: t.weight })),
    ...[...categories.keys()].map((name) => ({ name, kind: 'category', weight: 0 })),
  ];
  const search = new Fuse(
    docs.map((d) => plain(d.name)),
    { includeScore: true, ignoreLocation: true, threshold: 0.4 },
  );
  return (text) =>
    search
      .search(plain(text), { limit: 30 })
      .sort((a, b) => a.score! - b.score! || docs[b.refIndex].weight - docs[a.refIndex].weight)
      .slice(0, 10)
      .map((r) => docs[r.refIndex]);
}

/** An engine that answers each text once (the sets of several seeds share some queries: the hand-written ones). */
const remembered = (engine: Engine): Engine => {
  const seen = new Map<string, Found[]>();
  return (text) => seen.get(text) ?? (seen.set(text, engine(text)), seen.get(text)!);
};

/**
 * Median and 99th percentile of one search, in milliseconds, after a pass to
 * warm up: each query's best of `rounds` runs (on a machine shared with
 * other work, the best is the search's own time), as wall time and as the
 * CPU time of this process (which other processes do not inflate).
 */
export function timing(
  engine: Engine,
  queries: Query[],
  rounds = 3,
): { median: number; p99: number; cpuMedian: number; cpuP99: number } {
  for (const q of queries) engine(q.text);
  const wall: number[] = [];
  const cpu: number[] = [];
  for (const q of queries) {
    let [bestWall, bestCpu] = [Infinity, Infinity];
    for (let r = 0; r < rounds; r++) {
      const [start, used] = [performance.now(), process.cpuUsage()];
      engine(q.text);
      const spent = process.cpuUsage(used);
      bestWall = Math.min(bestWall, performance.now() - start);
      bestCpu = Math.min(bestCpu, (spent.user + spent.system) / 1000);
    }
    wall.push(bestWall);
    cpu.push(bestCpu);
  }
  const at = (list: number[], share: number) =>
    list.sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(list.length * share))];
  return { median: at(wall, 0.5), p99: at(wall, 0.99), cpuMedian: at(cpu, 0.5), cpuP99: at(cpu, 0.99) };
}

/** Texts made to cost a search the most, each within the 200 characters a search accepts (issue #53). */
export const HOSTILE: [string, string][] = [
  ['100 one-letter words', Array.from({ length: 100 }, (_, n) => 'abcdefghijklmnopqrstuvwxyz'[n % 26]).join(' ')],
  ['"the" × 50', Array(50).fill('the').join(' ')],
  ['U+FDFA × 200', '\uFDFA'.repeat(200)],
  ['a 200-letter word', 'ab'.repeat(100)],
  [
    '50 typo-prone words',
    Array.from({ length: 50 }, (_, n) => ['jhon', 'mery', 'stev', 'wiliam'][n % 4])
      .join(' ')
      .slice(0, 200),
  ],
];

const pct = (share: number) => `${Math.round(100 * share)}`;

/** Per family: the mean and worst share over the seeds (worst: the lowest for top-1 and top-3, the highest for no result). */
function summary(runs: Map<string, Figures>[], family: string): { queries: number; cells: string[] } | null {
  const shares = runs.map((r) => r.get(family)).filter((f) => f !== undefined);
  if (shares.length === 0) return null;
  const of = (pick: (f: Figures) => number, worst: (a: number, b: number) => number) => {
    const list = shares.map((f) => pick(f) / f.queries);
    return `${pct(list.reduce((a, b) => a + b, 0) / list.length)} / ${pct(list.reduce((a, b) => worst(a, b)))}`;
  };
  return {
    queries: Math.round(shares.reduce((n, f) => n + f.queries, 0) / shares.length),
    cells: [of((f) => f.top1, Math.min), of((f) => f.top3, Math.min), of((f) => f.none, Math.max)],
  };
}

async function main() {
  const { values } = commandLine({
    name: 'bench:search',
    usage: USAGE,
    options: {
      'per-family': { type: 'string' },
      seeds: { type: 'string' },
      seed: { type: 'string' },
      engines: { type: 'string' },
    },
  });
  const perFamily = Number(values['per-family'] ?? 40);
  const seeds =
    values.seed !== undefined
      ? values.seed.split(',').map(Number)
      : Array.from({ length: Number(values.seeds ?? 5) }, () => Math.floor(Math.random() * 2 ** 31));
  if (!seeds.every(Number.isSafeInteger) || !(perFamily > 0))
    throw new Error('bench:search: --seed, --seeds and --per-family take whole numbers');
  const { file, via } = await resolveSource(undefined);
  // The hand-kept misspellings and the families' draws are of the full archive's names.
  if (via === 'sample')
    refuser('bench:search')(
      'it needs the full archive: set ARCHIVE_SOURCE to oscars.csv, or npm run data:fetch (the sample is too small)',
      2,
    );
  const text = await readFile(file, 'utf8');
  const facts = sourceFacts(text, titleCaseCategory);
  const wanted = (values.engines ?? 'ours,fuse,minisearch').split(',');
  const all: [string, () => Engine][] = [
    ['ours', () => ours(text)],
    ['fuse', () => fuse(facts.things, facts.awards)],
    ['minisearch', () => library(facts.things, facts.awards)],
  ];
  const engines = all.filter(([name]) => wanted.includes(name)).map(([name, make]) => [name, make()] as const);
  console.log(
    `seeds ${seeds.join(' ')} (repeat: --seed ${seeds.join(',')}), ${perFamily} drawn queries a family, ${facts.things.length} things, from ${file}\n`,
  );
  const sets = seeds.map((seed) => querySet(facts, perFamily, seed));
  const runs = engines.map(([, engine]) => {
    const once = remembered(engine);
    return sets.map((queries) => score(once, queries));
  });
  console.log('each cell: the mean over the seeds / the worst seed, in %\n');
  console.log(`| family | queries | ${engines.map(([n]) => `${n} top-1 | ${n} top-3 | ${n} no result`).join(' | ')} |`);
  console.log(`|---|---:|${engines.map(() => '---:|---:|---:').join('|')}|`);
  for (const family of [...FAMILIES, ALL]) {
    const rows = runs.map((r) => summary(r, family));
    if (!rows[0]) continue;
    console.log(`| ${family} | ${rows[0].queries} | ${rows.map((r) => r!.cells.join(' | ')).join(' | ')} |`);
  }
  console.log(
    '\n| engine | queries timed | median ms | p99 ms | CPU median ms | CPU p99 ms |\n|---|---:|---:|---:|---:|---:|',
  );
  for (const [name, engine] of engines) {
    // fuse.js takes about 0.2 s a search: timed once on a sample of the first set.
    const queries = name === 'fuse' ? sets[0].filter((q, n) => n % 10 === 0) : sets[0];
    const t = timing(engine, queries, name === 'fuse' ? 1 : 3);
    console.log(
      `| ${name} | ${queries.length} | ${t.median.toFixed(3)} | ${t.p99.toFixed(3)} | ${t.cpuMedian.toFixed(3)} | ${t.cpuP99.toFixed(3)} |`,
    );
  }
  const ourEngine = engines.find(([name]) => name === 'ours')?.[1];
  if (ourEngine) {
    const median = timing(ourEngine, sets[0]).median;
    console.log('\n| hostile text (ours) | ms, best of 3 | times the median |\n|---|---:|---:|');
    for (const [name, text] of HOSTILE) {
      const t = timing(ourEngine, [{ family: name, text, expected: null }]).median;
      console.log(`| ${name} | ${t.toFixed(3)} | ${(t / median).toFixed(1)} |`);
    }
  }
  console.log(`\nload average ${os.loadavg()[0].toFixed(1)} on ${os.availableParallelism()} cores while it ran`);
}

if (import.meta.main) await main();
