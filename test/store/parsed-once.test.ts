/**
 * A warm lookup parses nothing: every index file it reads (a name's shard, a
 * record's shard, cut from an inflated pack) was parsed on the first lookup
 * and is found again in the reader's cache. A range of a pack is a new view
 * of the same memory each time it is cut, so the cache must know it as the
 * same bytes; it once did not, and a warm record lookup parsed its shard's
 * JSON on every request (82 µs a lookup in-process, against 5 now).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DiskData } from '../../adapters/_node/disk-data.ts';
import { createApi } from '../../src/api/handler.ts';
import { type Sandbox, sampleSandbox } from '../helpers/servers.ts';

let box: Sandbox;
let api: ReturnType<typeof createApi>;

beforeAll(async () => {
  box = await sampleSandbox('parsed-once');
  api = createApi({ data: new DiskData(box.dist), keys: { verify: () => true }, rateLimitPerMinute: 1e9 });
}, 120_000);
afterAll(() => box?.remove());

const ask = async (path: string) =>
  (await api.reply({ method: 'GET', url: `${path}/apikey=faa_tests`, header: () => null })).status;

describe('a warm lookup', () => {
  it.each([
    '/people/id=nm0417837',
    '/film/id=tt0018578',
    '/ceremony/year=1929',
    '/name/id=nm0417837',
    '/person/name=Emil Jannings',
  ])('parses no index file again: %s', async (path) => {
    expect(await ask(path)).toBe(200);
    const parse = vi.spyOn(JSON, 'parse');
    try {
      expect(await ask(path)).toBe(200);
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
  });
});
