/**
 * The records' worker thread (recordsApart in artifacts.ts): imports the
 * source's text, makes the records from its rows and their things, and once
 * the build says go (its guard let it through) stores them (storeRecords: their packs
 * hashed and gzipped here, not on the build's thread) and posts back what was
 * stored, with how the records were made and how long they took.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { once } from 'node:events';
import { importArchive } from '../archive/import.ts';
import { things } from './things.ts';
import { storeRecords, type RecordsWork } from './artifacts.ts';
import { records } from './records.ts';

const started = performance.now();
const work = workerData as RecordsWork;
const go = once(parentPort!, 'message');
const { rows } = importArchive(work.text);
const made = records(rows, things(rows));
await go;
const stored = await storeRecords(made, { gzipCache: work.gzipCache });
parentPort!.postMessage({
  ...stored,
  stats: made.stats,
  count: made.records.length,
  ms: performance.now() - started,
});
