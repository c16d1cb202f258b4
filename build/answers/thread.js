/**
 * Where each of the build's worker threads starts (apart.ts, onWorkerThread):
 * it runs `work` of the module named, with the data given and the port to
 * the build's thread.
 *
 * JavaScript, not TypeScript: the build's thread has loaded every module a
 * worker runs before it starts one, and written their compiled form to the
 * compile cache (lib/compile-cache.js), so a worker reads them from there; a
 * TypeScript entry was the one file it compiled, and loading Node's type
 * stripper for it cost each worker about 75 ms of CPU.
 */
import { parentPort, workerData } from 'node:worker_threads';

const { module, data } = workerData;
const { work } = await import(module);
await work(data, parentPort);
