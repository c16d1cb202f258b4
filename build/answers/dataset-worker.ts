/**
 * The dataset's worker thread: `datasetApart` starts it (thread.js runs
 * `work` there), which imports the source's text, posts the search index's
 * stored files, then, once told the source's revision (the build's guard let
 * it through), makes the dataset's files and posts them back, with how long
 * they took.
 */
import { once } from 'node:events';
import type { MessagePort } from 'node:worker_threads';
import { importArchive } from '../archive/import.ts';
import { storedFiles } from '../../src/shared/search.ts';
import { onWorkerThread } from './apart.ts';
import { datasetFiles, type DatasetFile, type DatasetSource } from './dataset.ts';
import { searchIndex } from './search-index.ts';
import { remembered, type StageMemo } from './stage-cache.ts';
import { nominationIds, things } from './things.ts';

/** What the dataset's worker thread is given: the source's text, imported there. */
export interface DatasetWork {
  text: string;
}

/** The dataset made apart: the search index's stored files as soon as they are made, then the dataset's files. */
export interface DatasetApart {
  search: Promise<string[]>;
  files: Promise<{ files: DatasetFile[]; ms: number }>;
  /** Lets the worker write the dataset, of `source` (only then does it touch a disk: a temporary SQLite file). */
  go: (source: DatasetSource) => void;
  stop: () => Promise<number>;
  /** Whether both were taken from the stage cache (stage-cache.ts), made by an earlier build. */
  cached: boolean;
  /** Their keeping in the stage cache, once made (never rejects). */
  kept: Promise<void>;
}

/**
 * The search index (search-index.ts) and the same files as datasetFiles,
 * made on a worker thread beside the build's other work, from the source's
 * text, which it imports itself: started at once, while the build's thread
 * imports the same text, it keeps this machine's second core busy from the
 * start (the import, about 0.4 s, left it idle), and it needs no rows sent
 * over. It writes nothing before `go`, which the build calls once the guard
 * let it through.
 */
export function datasetApart(data: DatasetWork, memo?: StageMemo): DatasetApart {
  const { apart, hit, kept } = remembered(memo?.folder, 'dataset', memo?.key ?? '', 2, () =>
    onWorkerThread(new URL(import.meta.url), data, 'the dataset', 2),
  );
  return {
    search: apart.results[0] as Promise<string[]>,
    files: apart.results[1] as Promise<{ files: DatasetFile[]; ms: number }>,
    go: (source) => apart.post(source),
    stop: apart.stop,
    cached: hit,
    kept,
  };
}

/** What the worker thread does (thread.js calls it). */
export async function work(data: DatasetWork, port: MessagePort): Promise<void> {
  const started = performance.now();
  const go = once(port, 'message');
  const { rows, archive, facts } = importArchive(data.text);
  const model = things(rows);
  port.postMessage(storedFiles(searchIndex(archive, facts, nominationIds(rows, model))));
  const [source] = (await go) as [DatasetSource];
  const files = datasetFiles(rows, source, model);
  port.postMessage({ files, ms: performance.now() - started });
}
