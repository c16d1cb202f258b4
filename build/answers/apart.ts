/**
 * Work on a worker thread beside the build's own (this machine has a second
 * core): the dataset (dataset-worker.ts) and the records (records-worker.ts).
 * The dataset's worker imports the source's text itself (datasetApart), from
 * the start, beside the build's own import; the records' worker is sent the
 * import's rows and their things, serialized (`rowsApart`): a third import
 * on two cores cost more CPU than the serialization and deserialization.
 */
import { deserialize, serialize } from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { SourceRow } from '../archive/import.ts';
import type { Things } from './things.ts';

/** What a worker reads of the things: every one, where each row's films and names are placed, and what was merged. */
export type ThingsApart = Pick<Things, 'all' | 'rowFilms' | 'rowPeople' | 'merged'>;

/** The rows and their things as bytes (v8.serialize, which keeps the things' identity), for any number of workers. */
export type RowsApart = Uint8Array & { readonly rowsApart: unique symbol };

export function rowsApart(rows: SourceRow[], model: ThingsApart): RowsApart {
  const { all, rowFilms, rowPeople, merged } = model;
  return serialize({ rows, model: { all, rowFilms, rowPeople, merged } }) as unknown as RowsApart;
}

/** Rows and things again, on the worker's side. */
export const rowsOf = (bytes: RowsApart) => deserialize(bytes) as { rows: SourceRow[]; model: ThingsApart };

/** A worker thread's answers, a way to tell it more, and a way to end it early (when the build stops before awaiting it). */
export interface Apart<T> {
  result: Promise<T>;
  /** Its answers in the order it posts them: `result` the first. */
  results: Promise<unknown>[];
  post: (message: unknown) => void;
  stop: () => Promise<number>;
}

/** Where a worker thread starts: it runs `work(data, port)` of the module given (thread.js). */
const THREAD = new URL('./thread.js', import.meta.url);

/**
 * Runs `work` of `module` on a worker thread with `data`; resolves `results` with the
 * `count` messages it posts, in order. A failure there is heard where a
 * result is awaited (each is marked as heard meanwhile, so never an unhandled
 * rejection).
 */
export function onWorkerThread<T>(module: URL, data: unknown, what: string, count = 1): Apart<T> {
  const worker = new Worker(THREAD, { workerData: { module: module.href, data } });
  const settle: { resolve: (value: unknown) => void; reject: (error: unknown) => void }[] = [];
  const results = Array.from({ length: count }, () => {
    const result = new Promise((resolve, reject) => settle.push({ resolve, reject }));
    result.catch(() => {});
    return result;
  });
  let received = 0;
  const fail = (error: unknown) => settle.slice(received).forEach((s) => s.reject(error));
  worker.on('message', (message) => settle[received++]?.resolve(message));
  worker.once('error', fail);
  worker.once('exit', (code) => fail(new Error(`${what}'s worker thread ended (exit code ${code}) without it`)));
  return {
    result: results[0] as Promise<T>,
    results,
    post: (message) => worker.postMessage(message),
    stop: () => worker.terminate(),
  };
}
