/**
 * The Worker's warm-up (adapters/_worker.ts `warmUp`, run as its isolate
 * starts): one ranking through the request path as the Worker wires it, over
 * the files the Worker carries, answered 200 without fetching, logging or
 * writing anything; the answer a request then gets for the same ranking is
 * the one from disk; over no carried files it settles with an error status
 * and still logs nothing.
 */
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { bundledFiles } from '../../adapters/_cloudflare/worker-bundle.node.ts';
import { FetchedFiles } from '../../adapters/_fetch.ts';
import { WARM_UP_PATH, warmUp } from '../../adapters/_worker.ts';
import { DiskData } from '../../adapters/_node/disk-data.ts';
import { createApi } from '../../src/api/handler.ts';
import { Keys } from '../../src/keys/rules.ts';
import { SqliteKeyBackend } from '../../src/keys/stores/sqlite.node.ts';
import { ArchiveReader } from '../../src/store/archive.ts';
import { SAMPLE_SOURCE } from '../helpers/paths.ts';
import { buildInto, tempDir } from '../helpers/temp.ts';

let dist: string;
let backend: SqliteKeyBackend;
let key: string;

beforeAll(async () => {
  dist = await buildInto(SAMPLE_SOURCE, 'warm-up');
  backend = new SqliteKeyBackend(path.join(await tempDir('warm-up-keys'), 'keys.db'));
  key = await new Keys(backend).issue('warm-up@example.org');
});
afterAll(() => backend.close());
afterEach(() => vi.restoreAllMocks());

/** Every console method the Worker could write with, watched. */
const consoleCalls = () => (['log', 'info', 'warn', 'error', 'debug'] as const).map((m) => vi.spyOn(console, m));

describe("the Worker's warm-up", () => {
  it('answers its ranking 200 from the carried files, fetching and logging nothing', async () => {
    const files = new FetchedFiles({ bundled: bundledFiles(dist) });
    const archive = new ArchiveReader();
    archive.prepare(files.carried());
    const fetched: string[] = [];
    const source = files.through(async (file) => {
      fetched.push(file);
      return new Response('Not Found', { status: 404 });
    });
    const spies = consoleCalls();
    expect(await warmUp(archive, source)).toBe(200);
    expect(fetched).toEqual([]);
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();

    // A request after it is answered as from disk.
    const url = `${WARM_UP_PATH}/apikey=${key}`;
    const options = { keys: new Keys(backend), rateLimitPerMinute: 1e6 };
    const [after, disk] = await Promise.all([
      createApi({ ...options, archive, data: source }).reply({ method: 'GET', url, header: () => null }),
      createApi({ ...options, data: new DiskData(dist) }).reply({ method: 'GET', url, header: () => null }),
    ]);
    expect([after.status, after.headers.etag]).toEqual([200, disk.headers.etag]);
    expect(Buffer.from(after.body!).equals(Buffer.from(disk.body!))).toBe(true);
  });

  it('settles with an error status over no carried files, logging nothing', async () => {
    const spies = consoleCalls();
    const status = await warmUp(new ArchiveReader(), new FetchedFiles().carried());
    expect(status).toBeGreaterThanOrEqual(500);
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });
});
