/**
 * The dataset's worker thread (datasetFilesApart in dataset.ts): makes the
 * dataset's files from what it is given and posts them back, with how long
 * they took.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { rowsOf } from './apart.ts';
import { datasetFiles, type DatasetWork } from './dataset.ts';

const started = performance.now();
const { rows: apart, source } = workerData as DatasetWork;
const { rows, model } = rowsOf(apart);
const files = datasetFiles(rows, source, model);
parentPort!.postMessage({ files, ms: performance.now() - started });
