/**
 * The dataset's worker thread (datasetApart in dataset.ts): imports the
 * source's text, posts the search index's stored files, then, once told the
 * source's revision (the build's guard let it through), makes the dataset's
 * files and posts them back, with how long they took.
 */
import { once } from 'node:events';
import { parentPort, workerData } from 'node:worker_threads';
import { importArchive } from '../archive/import.ts';
import { storedFiles } from '../../src/shared/search.ts';
import { datasetFiles, type DatasetSource, type DatasetWork } from './dataset.ts';
import { searchIndex } from './search-index.ts';
import { nominationIds, things } from './things.ts';

const started = performance.now();
const go = once(parentPort!, 'message');
const { rows, archive, facts } = importArchive((workerData as DatasetWork).text);
const model = things(rows);
parentPort!.postMessage(storedFiles(searchIndex(archive, facts, nominationIds(rows, model))));
const [source] = (await go) as [DatasetSource];
const files = datasetFiles(rows, source, model);
parentPort!.postMessage({ files, ms: performance.now() - started });
