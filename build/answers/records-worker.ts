/**
 * The records' worker thread (recordsApart in artifacts.ts): makes the records
 * from the rows and their things, stores them (storeRecords: their packs
 * hashed and gzipped here, not on the build's thread) and posts back what was
 * stored, with how the records were made and how long they took.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { rowsOf } from './apart.ts';
import { storeRecords, type RecordsWork } from './artifacts.ts';
import { records } from './records.ts';

const started = performance.now();
const work = workerData as RecordsWork;
const { rows, model } = rowsOf(work.rows);
const made = records(rows, model);
const stored = await storeRecords(made, { gzipCache: work.gzipCache });
parentPort!.postMessage({
  ...stored,
  stats: made.stats,
  count: made.records.length,
  ms: performance.now() - started,
});
