/**
 * The records' worker thread: `recordsApart` starts it (thread.js runs
 * `work` there), which makes the records from the rows and their things,
 * stores them (storeRecords: their packs hashed and gzipped here, not on the
 * build's thread) and posts back what was stored, with how the records were
 * made and how long they took.
 */
import type { MessagePort } from 'node:worker_threads';
import { onWorkerThread, rowsOf, type RowsApart } from './apart.ts';
import { storeRecords, type StoredRecords } from './artifacts.ts';
import { records, type Records } from './records.ts';
import { remembered, type Remembered, type StageMemo } from './stage-cache.ts';

/** What the records' worker thread is given. */
export interface RecordsWork {
  rows: RowsApart;
  gzipCache?: string;
}

/** The records as made and stored on a worker thread: what was stored, how they were made, how long it took. */
export interface RecordsApart extends StoredRecords {
  stats: Records['stats'];
  /** How many records, rankings included. */
  count: number;
  ms: number;
}

/**
 * The records made and stored (artifacts.ts, storeRecords) on a worker
 * thread, beside the answers and the dataset: on the build's own thread they
 * took about 1.5 s, the longest part of a rebuild. Or as an earlier build
 * made them, remembered under `memo` (stage-cache.ts): `data` is then never
 * made.
 */
export const recordsApart = (data: () => RecordsWork, memo?: StageMemo): Remembered<RecordsApart> =>
  remembered(memo?.folder, 'records', memo?.key ?? '', 1, () =>
    onWorkerThread(new URL(import.meta.url), data(), 'the records'),
  );

/** What the worker thread does (thread.js calls it). */
export async function work(data: RecordsWork, port: MessagePort): Promise<void> {
  const started = performance.now();
  const { rows, model } = rowsOf(data.rows);
  const made = records(rows, model);
  const stored = await storeRecords(made, { gzipCache: data.gzipCache });
  port.postMessage({
    ...stored,
    stats: made.stats,
    count: made.records.length,
    ms: performance.now() - started,
  } satisfies RecordsApart);
}
