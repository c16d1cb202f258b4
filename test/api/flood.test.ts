/**
 * A flood: over 100,000 requests through the core in-process (injected clock)
 * and a few thousand over loopback HTTP, from one key and from tens of
 * thousands of distinct keys, valid and invalid. The limiter lets through at
 * most the limit per window per key, answers the rest 429 with Retry-After,
 * and memory stays bounded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi, type Api } from '../../src/api/handler.ts';
import type { ApiReply } from '../../src/http/reply.ts';
import { Keys } from '../../src/keys/rules.ts';
import { RateLimiter } from '../../src/shared/rate-limit.ts';
import { DiskData } from '../../adapters/_node/disk-data.ts';
import { rawRequest } from '../helpers/http.ts';
import { keyWatchingLog, makeKeys, memoryKeys, storeKeys, unissuedKey } from '../helpers/keys.ts';
import { heapUsed } from '../helpers/memory.ts';
import { listen, type Running, sampleSandbox, type Sandbox } from '../helpers/servers.ts';

const LIMIT = 3;
const WINDOW_MS = 60_000;
const DISTINCT_KEYS = 20_000;
const PATHS = ['/archive/year=1930', '/person/name=Emma%20Stone', '/award/name=Actor', '/movie/name=Sinners/year=2026'];

let box: Sandbox;
let keys: string[];
let clock = 1_000_000;
let api: Api;
const log = keyWatchingLog();
const issued = new Set<string>();

/**
 * Retained-heap bound for a limiter keeping 1,000 windows (about 0.15 MB measured; 100,000 windows take about 10 MB).
 */
const RETAINED_BOUND = 2 * 1024 * 1024;

/**
 * 100,000 distinct keys through a fresh limiter keeping at most
 * `maxKeys` windows; the heap it retains, measured while it is alive.
 */
function floodLimiter(maxKeys: number): { limiter: RateLimiter; retained: number; largest: number } {
  let now = 0;
  const baseline = heapUsed();
  const limiter = new RateLimiter({ limit: 2, maxKeys, now: () => now });
  let largest = 0;
  for (let i = 0; i < 100_000; i++) {
    limiter.hit(`k${i}`);
    largest = Math.max(largest, limiter.size);
    if (i % 1_000 === 0) now += 10;
  }
  return { limiter, retained: heapUsed() - baseline, largest };
}

beforeAll(async () => {
  box = await sampleSandbox('flood');
  const made = makeKeys(DISTINCT_KEYS, 'flood');
  keys = made.keys;
  for (const k of keys) issued.add(k);
  api = createApi({
    data: new DiskData(box.dist, { revalidateMs: 60_000 }),
    keys: new Keys(memoryKeys(made.records)),
    rateLimitPerMinute: LIMIT,
    now: () => clock,
    log: log.log,
  });
}, 60_000);

afterAll(() => box?.remove());

const ask = async (path: string, key: string): Promise<ApiReply> =>
  api.reply({ method: 'GET', url: `${path}/apikey=${key}`, header: () => null });

/** Keeps the first few problems a flood met (null: none), enough to show in a failure. */
function note(wrong: string[], problem: string | null): void {
  if (problem !== null && wrong.length < 5) wrong.push(problem);
}

/**
 * What is wrong with a reply that should be our 429 for a window that began
 * at `windowStart`, or null. Checked without expect() for each of the 100,000
 * replies (the file took 14.4 s of CPU with matchers on every reply, 10.2 s
 * without): each test expects its list of wrong replies to be empty.
 */
function wrong429(out: ApiReply, windowStart: number): string | null {
  const retryAfter = Number(out.headers['retry-after']);
  const most = Math.ceil((windowStart + WINDOW_MS - clock) / 1000) || 1;
  const text = new TextDecoder().decode(out.body ?? new Uint8Array(0));
  let body: { error?: unknown; retryAfter?: unknown } = {};
  try {
    body = JSON.parse(text);
  } catch {
    // reported below
  }
  const right =
    out.status === 429 &&
    retryAfter >= 1 &&
    retryAfter <= most &&
    body.error === 'Too Many Requests' &&
    body.retryAfter === retryAfter;
  return right
    ? null
    : `${out.status}, Retry-After ${out.headers['retry-after']} (1 to ${most}): ${text.slice(0, 120)}`;
}

describe('a flood through the core', () => {
  let total = 0;

  it('lets one key through at most the limit per window, whatever it sends', async () => {
    for (let window = 0; window < 4; window++) {
      const start = clock;
      let passed = 0;
      const wrong: string[] = [];
      for (let i = 0; i < 5_000; i++) {
        const out = await ask(PATHS[i % PATHS.length], keys[0]);
        total++;
        if (out.status === 200) passed++;
        else note(wrong, wrong429(out, start));
        if (i % 100 === 99) clock += 1_000; // the window runs on while the flood goes on
      }
      expect(passed).toBe(LIMIT);
      expect(wrong).toEqual([]);
      clock = start + WINDOW_MS; // the next window
    }
  });

  it('gives each of tens of thousands of keys its own window, exactly', async () => {
    clock += WINDOW_MS;
    const start = clock;
    const passed = new Uint8Array(keys.length);
    const wrong: string[] = [];
    for (let round = 0; round < LIMIT + 1; round++) {
      for (let k = 0; k < keys.length; k++) {
        const out = await ask(PATHS[(k + round) % PATHS.length], keys[k]);
        total++;
        if (out.status === 200) passed[k]++;
        else note(wrong, wrong429(out, start));
      }
      clock += 100;
    }
    expect(wrong).toEqual([]);
    expect(passed.every((n) => n === LIMIT)).toBe(true);
    expect(api.limiter.size).toBeLessThanOrEqual(api.limiter.maxKeys);
  });

  it('answers invalid keys 403 without tracking them', async () => {
    const before = api.limiter.size;
    const invalid = [
      () => unissuedKey(),
      () => `${keys[0]}x`,
      () => keys[1].slice(0, -1),
      () => 'faa_',
      () => '',
      () => `%${Math.random()}`,
    ];
    const statuses = new Map<number, number>();
    for (let i = 0; i < 20_000; i++) {
      const out = await ask(PATHS[i % PATHS.length], invalid[i % invalid.length]());
      total++;
      statuses.set(out.status, (statuses.get(out.status) ?? 0) + 1);
    }
    expect(Object.fromEntries(statuses)).toEqual({ 403: 20_000 });
    expect(api.limiter.size).toBe(before);
  });

  it('has sent over 100,000 requests, kept memory bounded and logged no whole key', () => {
    expect(total).toBeGreaterThanOrEqual(100_000);
    expect(log.count).toBeGreaterThanOrEqual(total);
    expect(log.leaks).toEqual([]);
    // 20,000 windows and the cached sample files: a few MB; the bound leaves room for GC timing.
    expect(heapUsed()).toBeLessThan(256 * 1024 * 1024);
  });
});

describe('the limiter under more distinct keys than it keeps', () => {
  it('never holds more than maxKeys windows, and never lets a tracked key past its limit', () => {
    const { limiter, retained, largest } = floodLimiter(1_000);
    expect(largest).toBe(1_000);
    // A key still tracked gets exactly its limit.
    expect(limiter.hit('hot').ok).toBe(true);
    expect(limiter.hit('hot').ok).toBe(true);
    expect(limiter.hit('hot')).toMatchObject({ ok: false });
    expect(retained).toBeLessThan(RETAINED_BOUND);
  });

  it('measures retained memory finely enough to catch a limiter that keeps every window', () => {
    const { limiter, retained } = floodLimiter(1_000_000);
    expect(limiter.size).toBe(100_000);
    expect(retained).toBeGreaterThan(2 * RETAINED_BOUND);
  });
});

describe('a flood over loopback HTTP', () => {
  let server: Running;
  let httpKeys: string[];
  const httpLog = keyWatchingLog();

  beforeAll(async () => {
    const made = makeKeys(800, 'http');
    httpKeys = made.keys;
    storeKeys(box.keysDb, made.records);
    server = await listen({ dist: box.dist, keysDb: box.keysDb, rateLimitPerMinute: 10, log: httpLog.log });
  });
  afterAll(() => server?.close());

  /** Runs `count` requests, 16 at a time. */
  async function flood(count: number, path: (i: number) => string) {
    const statuses: number[] = new Array(count);
    const retry: number[] = [];
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const i = next++;
        const reply = await rawRequest(server.port, 'GET', path(i));
        statuses[i] = reply.status;
        if (reply.status === 429) retry.push(Number(reply.headers['retry-after']));
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    return { statuses, retry };
  }

  // Found by this flood with the old JSON key file: requests that arrived while it was first read
  // saw no records at all, and a valid key got 403. The SQLite store reads its keys before it serves.
  it('accepts a valid key from the very first concurrent requests after start', async () => {
    const fresh = await listen({ dist: box.dist, keysDb: box.keysDb, rateLimitPerMinute: 1_000, log: httpLog.log });
    try {
      const replies = await Promise.all(
        Array.from({ length: 16 }, () => rawRequest(fresh.port, 'GET', `/archive/year=1930/apikey=${httpKeys[799]}`)),
      );
      expect(replies.map((r) => r.status)).toEqual(new Array(16).fill(200));
    } finally {
      await fresh.close();
    }
  });

  it('limits one key, passes many keys and refuses invalid ones, over 2,000 requests', async () => {
    // The server has its keys (see the test above for why this matters).
    expect((await rawRequest(server.port, 'GET', `/archive/year=1930/apikey=${httpKeys[798]}`)).status).toBe(200);
    const one = await flood(600, (i) => `${PATHS[i % PATHS.length]}/apikey=${httpKeys[0]}`);
    expect(one.statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(one.statuses.filter((s) => s === 429)).toHaveLength(590);
    expect(Math.min(...one.retry)).toBeGreaterThanOrEqual(1);

    const many = await flood(1_200, (i) => `${PATHS[i % PATHS.length]}/apikey=${httpKeys[1 + (i % 600)]}`);
    expect(many.statuses.every((s) => s === 200)).toBe(true);

    const invalid = await flood(400, (i) => `${PATHS[i % PATHS.length]}/apikey=${unissuedKey()}`);
    expect(invalid.statuses.every((s) => s === 403)).toBe(true);

    expect(httpLog.count).toBeGreaterThanOrEqual(2_201);
    expect(httpLog.leaks).toEqual([]);
  });
});
