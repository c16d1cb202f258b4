/**
 * The Worker keeps nothing per request, and its memory is its caches':
 * in workerd (test/helpers/workerd.ts: the deployed bundle, no wrangler dev
 * in front), after a full collection, the Worker's isolate grows through
 * distinct searches by no more than twice what its answer cache counts for
 * them, and not at all when the same searches are asked again. The answer
 * cache stops at 16 MiB counted, so 200,000 distinct searches hold at most
 * the isolate's warm size plus that bound at the measured real bytes per
 * counted byte: asserted under the 128 MB a Worker has (docs/development.md).
 *
 * Measured on the isolate, not on workerd's process: locally that process
 * also runs a dozen helper isolates of Miniflare's (assets, D1, cache), and
 * V8 there collects garbage only under pressure, so without a collection its
 * resident size climbs with every request for any Worker, a constant one
 * too (docs/development.md, "The Worker's memory").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEARCH_ENTRY_BYTES } from '../../src/store/archive.ts';
import { sampleSandbox, type Sandbox } from '../helpers/servers.ts';
import { residentBytes, startWorkerd, type Workerd } from '../helpers/workerd.ts';

const MiB = 1024 * 1024;
/** The answer cache's bound (docs/development.md). */
const ANSWER_BYTES = 16 * MiB;
/** What a Worker may hold. */
const WORKER_LIMIT = 128_000_000;
/**
 * Distinct searches measured: enough for a slope of about 1 KiB a
 * search to stand far above the collector's noise (tens of KiB).
 */
const COUNT = 2_000;

/** A text no one asked before, `i` apart: some find names, most nothing. */
const distinctText = (i: number) =>
  `${['emma', 'stone', 'janet', 'wings', 'actor', 'jannings', 'best'][i % 7]}${i % 3 ? ' ' : ''}${i.toString(36)}`;

let box: Sandbox;
let worker: Workerd;

beforeAll(async () => {
  box = await sampleSandbox('worker-memory');
  worker = await startWorkerd(box.dist, { RATE_LIMIT_PER_MINUTE: '1000000000' });
}, 180_000);
afterAll(async () => {
  await worker?.stop();
  await box?.remove();
});

/**
 * One search, answered 200 uncompressed: the bytes its answer
 * cache entry counts (SEARCH_ENTRY_BYTES, its body and its key).
 */
async function search(text: string): Promise<number> {
  const response = await fetch(`${worker.base}/search/name=${encodeURIComponent(text)}/apikey=${worker.key}`, {
    headers: { 'accept-encoding': 'identity' },
  });
  const body = new Uint8Array(await response.arrayBuffer());
  expect(response.status).toBe(200);
  return SEARCH_ENTRY_BYTES + body.length + `search\u0000${text}`.length * 2;
}

describe('the Worker in workerd', () => {
  it('holds distinct searches within 2x of what its answer cache counts, repeated ones not at all, and 200,000 under 128 MB', async () => {
    const poke = () => fetch(`${worker.base}/health`).then((r) => r.arrayBuffer());
    // Warm: every search file read and parsed, the code compiled.
    for (let i = 0; i < 300; i++) await search(distinctText(1e9 + i));
    const warm = await worker.isolateBytes(poke);
    const rssWarm = residentBytes(worker.pid);
    let counted = 0;
    for (let i = 0; i < COUNT; i++) counted += await search(distinctText(i));
    const distinct = await worker.isolateBytes(poke);
    const rssDistinct = residentBytes(worker.pid);
    // The same searches again, twice: each is in the answer cache
    // (2,000 entries are far below its bound), nothing new to
    // keep. The first round settles what a first repeat compiles; the second is measured.
    for (let i = 0; i < COUNT; i++) await search(distinctText(i));
    const settled = await worker.isolateBytes(poke);
    for (let i = 0; i < COUNT; i++) await search(distinctText(i));
    const repeated = await worker.isolateBytes(poke);
    const rssRepeated = residentBytes(worker.pid);

    const held = distinct - warm;
    const realPerCounted = held / counted;
    // The answer cache fills at ANSWER_BYTES counted and then drops its oldest: beyond that, nothing grows.
    const fullAt = Math.round(ANSWER_BYTES / (counted / COUNT));
    const at200k = warm + Math.min(200_000 / fullAt, 1) * ANSWER_BYTES * Math.max(realPerCounted, 1);
    const f = (n: number) => (n / MiB).toFixed(2);
    console.log(
      [
        `isolate after a collection: warm ${f(warm)} MiB; +${COUNT} distinct searches ${f(distinct)} MiB (${(held / COUNT).toFixed(0)} B each, the cache counts ${(counted / COUNT).toFixed(0)}); the same again ${f(settled)} MiB, and again ${f(repeated)} MiB (${((repeated - settled) / COUNT).toFixed(0)} B each)`,
        `workerd RSS (Miniflare's helper isolates too): ${f(rssWarm)} -> ${f(rssDistinct)} -> ${f(rssRepeated)} MiB`,
        `200,000 distinct searches: the answer cache is full after about ${fullAt.toLocaleString('en')}; the isolate then holds about ${f(at200k)} MiB`,
      ].join('\n'),
    );
    expect(held).toBeLessThanOrEqual(2 * counted);
    // Nothing kept per request: a repeated search adds less than 64 bytes, the answer cache's Map refreshing its order
    // included (its deleted slots are reclaimed only when it rehashes); keeping a URL and an answer would add over 150.
    expect(repeated - settled).toBeLessThanOrEqual(COUNT * 64);
    expect(at200k).toBeLessThan(WORKER_LIMIT);
  }, 300_000);
});
