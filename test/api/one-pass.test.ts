/**
 * One pass per lookup (issue #52): a warm person lookup, search and join,
 * with a shared cache in front, enter the store once, counted by wrapping
 * every method of ArchiveReader and counting the calls made from outside it
 * (a continuation inside it, `then` of its own promise, counts as another
 * entry). Before, a lookup entered it three times (find, stream, read) and a
 * fourth for the shared cache's revision tag (the manifest again). And they
 * enter the handler once: V8's call counts (precise coverage) show each
 * function of src/api/handler.ts the request runs run once, none of them a
 * callback handed to another module (before: 4 such re-entries, through
 * `andThen` and promises, among 14 calls).
 */
import { Session } from 'node:inspector/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiskData } from '../../adapters/_node/disk-data.ts';
import { createApi } from '../../src/api/handler.ts';
import { ArchiveReader } from '../../src/store/archive.ts';
import type { SharedPolicy } from '../../src/http/cache.ts';
import { type Sandbox, sampleSandbox } from '../helpers/servers.ts';

let box: Sandbox;
const session = new Session();
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
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  const sharedCache = (policy: SharedPolicy): Record<string, string> =>
    policy.keep ? { 'x-tags': policy.tags.join(' ') } : {};
  api = createApi({
    data: new DiskData(box.dist, { revalidateMs: 60_000 }),
    keys: { verify: () => true },
    sharedCache,
    log: () => {},
  });
}, 120_000);

afterAll(async () => {
  const proto = ArchiveReader.prototype as unknown as Record<string, unknown>;
  for (const [name, original] of originals) proto[name] = original;
  session.disconnect();
  await box?.remove();
});

/** The functions of src/api/handler.ts run since the last ask, each with its name (`(callback)` for an unnamed one) and how many times it ran. */
async function handlerCalls(): Promise<[string, number][]> {
  const { result } = await session.post('Profiler.takePreciseCoverage');
  const handler = result.find((script) => script.url.endsWith('/src/api/handler.ts'));
  return (handler?.functions ?? [])
    .filter((f) => f.ranges[0].count > 0 && f.ranges[0].startOffset > 0)
    .map((f) => [f.functionName || '(callback)', f.ranges[0].count]);
}

/** The store's entries, and the handler's functions run, for one warm request (asked once before, to warm it). */
async function entries(path: string): Promise<{ store: string[]; handler: [string, number][] }> {
  const url = `${path}/apikey=faa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`;
  const ask = async () => api.reply({ method: 'GET', url, header: () => null });
  expect((await ask()).status).toBe(200);
  calls.length = 0;
  await handlerCalls(); // taking the counts resets them
  const reply = await ask();
  const handler = await handlerCalls();
  expect([reply.status, reply.headers['x-tags']?.split(' ').length]).toEqual([200, 3]);
  return { store: [...calls], handler };
}

describe('a warm lookup', () => {
  it.each([
    ['a person', '/person/name=Emma%20Stone'],
    ['a search', '/search/name=emma%20ston'],
    ['a join', '/award/name=Actor'],
  ])('of %s enters the store once and the handler once', async (_, path) => {
    const { store, handler } = await entries(path);
    expect(store).toEqual(['answer']);
    expect(handler.length).toBeGreaterThan(3); // the counts are there: reply, route, lookup, ...
    expect(handler.filter(([, count]) => count !== 1)).toEqual([]);
    expect(handler.filter(([name]) => name === '(callback)')).toEqual([]);
  });
});
