/**
 * One pass per lookup (issue #52): a warm person lookup, search and join,
 * with a shared cache in front, enter the store once, counted by wrapping
 * every method of ArchiveReader and counting the calls made from outside it
 * (a continuation inside it, `then` of its own promise, counts as another
 * entry). Before, a lookup entered it three times (find, stream, read) and a
 * fourth for the shared cache's revision tag (the manifest again).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiskData } from '../../adapters/_node/disk-data.ts';
import { createApi } from '../../src/api/handler.ts';
import { ArchiveReader } from '../../src/store/archive.ts';
import type { SharedPolicy } from '../../src/http/cache.ts';
import { type Sandbox, sampleSandbox } from '../helpers/servers.ts';

let box: Sandbox;
let api: ReturnType<typeof createApi>;
const calls: string[] = [];
let depth = 0;
const originals = new Map<string, (...args: unknown[]) => unknown>();

/** Counts each call into ArchiveReader made while no call of it is on the stack. */
function countEntries(): void {
  const proto = ArchiveReader.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of Object.getOwnPropertyNames(ArchiveReader.prototype)) {
    const descriptor = Object.getOwnPropertyDescriptor(ArchiveReader.prototype, name)!;
    if (name === 'constructor' || typeof descriptor.value !== 'function') continue;
    const original = descriptor.value as (...args: unknown[]) => unknown;
    originals.set(name, original);
    proto[name] = function (this: unknown, ...args: unknown[]) {
      if (depth === 0) calls.push(name);
      depth++;
      try {
        return original.apply(this, args);
      } finally {
        depth--;
      }
    };
  }
}

beforeAll(async () => {
  box = await sampleSandbox('one-pass');
  countEntries();
  const sharedCache = (policy: SharedPolicy): Record<string, string> => (policy.keep ? { 'x-tags': policy.tags.join(' ') } : {});
  api = createApi({ data: new DiskData(box.dist, { revalidateMs: 60_000 }), keys: { verify: () => true }, sharedCache, log: () => {} });
}, 120_000);

afterAll(async () => {
  const proto = ArchiveReader.prototype as unknown as Record<string, unknown>;
  for (const [name, original] of originals) proto[name] = original;
  await box?.remove();
});

/** The store's entries for one warm request (asked once before, to warm it). */
async function entries(path: string): Promise<string[]> {
  const url = `${path}/apikey=faa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`;
  const ask = async () => api.reply({ method: 'GET', url, header: () => null });
  expect((await ask()).status).toBe(200);
  calls.length = 0;
  const reply = await ask();
  expect([reply.status, reply.headers['x-tags']?.split(' ').length]).toEqual([200, 3]);
  return [...calls];
}

describe('a warm lookup', () => {
  it.each([
    ['a person', '/person/name=Emma%20Stone'],
    ['a search', '/search/name=emma%20ston'],
    ['a join', '/award/name=Actor'],
  ])('of %s enters the store once', async (_, path) => {
    expect(await entries(path)).toEqual(['answer']);
  });
});
