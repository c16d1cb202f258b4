/**
 * Work on a worker thread beside the build's own (this machine has a second
 * core): the dataset (dataset-worker.ts) and the records (records-worker.ts).
 * Each imports the source's text itself, from the moment it is read: sending
 * it the rows instead cost the build's thread their serialization and the
 * worker their deserialization (about 0.3 s together), and kept it waiting
 * for the build's own import (about 0.5 s, the second core idle meanwhile).
 * A worker writes nothing until the build says go (once the guard let it
 * through).
 */
import { Worker } from 'node:worker_threads';

/** A worker thread's answers, a way to tell it more, and a way to end it early (when the build stops before awaiting it). */
export interface Apart<T> {
  result: Promise<T>;
  /** Its answers in the order it posts them: `result` the first. */
  results: Promise<unknown>[];
  post: (message: unknown) => void;
  stop: () => Promise<number>;
}

/**
 * Runs `module` on a worker thread with `data`; resolves `results` with the
 * `count` messages it posts, in order. A failure there is heard where a
 * result is awaited (each is marked as heard meanwhile, so never an unhandled
 * rejection).
 */
export function onWorkerThread<T>(module: URL, data: unknown, what: string, count = 1): Apart<T> {
  const worker = new Worker(module, { workerData: data });
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
