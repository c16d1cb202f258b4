/**
 * Search quality and speed: our search (`/search/name=…`, the index the
 * build writes, searched in-process as the runtime searches it) beside a
 * well-known library, MiniSearch (fuzzy 0.2, prefix), given the same names
 * and the same tie-break (more nominations first). The query set
 * (bench/search-queries.ts) is generated from the source with a fixed seed,
 * in families, with what each query should find; this prints, per family,
 * the share whose first result is that (top-1), whose first three hold it
 * (top-3), and that find nothing (for names never nominated, the share that
 * find anything is the failure), then the median and 99th percentile time of
 * one search, warm, in this process.
 *
 *   npm run bench:search [-- --per-family N]
 *
 * Needs the full archive: ARCHIVE_SOURCE, else data/cache (npm run data:fetch).
 */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import MiniSearch from 'minisearch';
import { commandLine } from '../lib/command-line.ts';
import { importArchive } from '../build/archive/import.ts';
import { searchIndex } from '../build/answers/search-index.ts';
import { resolveSource } from '../build/archive/source.ts';
import { titleCaseCategory } from '../src/shared/category-name.ts';
import { searchOver, storedFiles } from '../src/store/search.ts';
import { ALL, type Engine, FAMILIES, type Found, plain, type Query, querySet, score, sourceFacts, type Thing } from './search-queries.ts';

const USAGE = `usage: npm run bench:search [-- --per-family N]

Search quality (top-1, top-3, no result, per family of queries) and speed
(median and p99 of one warm search, in-process) of our search beside
MiniSearch, on a query set generated from the archive with a fixed seed.

Options:
  --per-family N   generated queries in each family (default 60)
  -h, --help       this text`;


/** Our search, over the index the build writes, as the archive reader routes a text to it. */
export function ours(source: string): Engine {
  const { archive, facts, ids } = importArchive(source);
  const stored = storedFiles(searchIndex(archive, facts, ids));
  const size = (text: string) => new TextEncoder().encode(text).length;
  console.log(`our index: ${stored.reduce((n, text) => n + size(text), 0)} bytes in ${stored.length} files, the core ${size(stored[0])}`);
  return searchOver(stored);
}

/** MiniSearch over the same things and category names, fuzzy 0.2 and prefix, ties by more nominations. */
export function library(things: Thing[], categories: Map<string, string>): Engine {
  const docs: (Found & { weight: number; text: string; year: string })[] = [
    ...things.map((t) => ({ name: t.name, kind: t.kind, id: t.id, weight: t.weight, text: t.name, year: t.filmYear ?? '' })),
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

/**
 * Median and 99th percentile of one search, in milliseconds, after a pass to
 * warm up: each query's best of `rounds` runs (on a machine shared with
 * other work, the best is the search's own time), as wall time and as the
 * CPU time of this process (which other processes do not inflate).
 */
export function timing(engine: Engine, queries: Query[], rounds = 3): { median: number; p99: number; cpuMedian: number; cpuP99: number } {
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
  const at = (list: number[], share: number) => list.sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(list.length * share))];
  return { median: at(wall, 0.5), p99: at(wall, 0.99), cpuMedian: at(cpu, 0.5), cpuP99: at(cpu, 0.99) };
}

const pct = (n: number, of: number) => `${Math.round((100 * n) / of)}%`;

async function main() {
  const { values } = commandLine({ name: 'bench:search', usage: USAGE, options: { 'per-family': { type: 'string' } } });
  const perFamily = Number(values['per-family'] ?? 60);
  const { file } = await resolveSource(undefined);
  const text = await readFile(file, 'utf8');
  const facts = sourceFacts(text, titleCaseCategory);
  const queries = querySet(facts, perFamily);
  const engines: [string, Engine][] = [
    ['ours', ours(text)],
    ['minisearch', library(facts.things, facts.awards)],
  ];
  const scored = engines.map(([name, engine]) => [name, score(engine, queries), timing(engine, queries)] as const);
  console.log(`${queries.length} queries from ${file}, ${facts.things.length} things\n`);
  console.log(`| family | queries | ${engines.map(([n]) => `${n} top-1 | ${n} top-3 | ${n} no result`).join(' | ')} |`);
  console.log(`|---|---:|${engines.map(() => '---:|---:|---:').join('|')}|`);
  for (const family of [...FAMILIES, ALL]) {
    const first = scored[0][1].get(family);
    if (!first) continue;
    const cells = scored.map(([, s]) => {
      const f = s.get(family)!;
      return `${pct(f.top1, f.queries)} | ${pct(f.top3, f.queries)} | ${pct(f.none, f.queries)}`;
    });
    console.log(`| ${family} | ${first.queries} | ${cells.join(' | ')} |`);
  }
  console.log('\n| engine | median ms | p99 ms | CPU median ms | CPU p99 ms |\n|---|---:|---:|---:|---:|');
  for (const [name, , t] of scored) console.log(`| ${name} | ${t.median.toFixed(3)} | ${t.p99.toFixed(3)} | ${t.cpuMedian.toFixed(3)} | ${t.cpuP99.toFixed(3)} |`);
  console.log(`\nload average ${os.loadavg()[0].toFixed(1)} on ${os.availableParallelism()} cores while it ran`);
}

if (import.meta.main) await main();
