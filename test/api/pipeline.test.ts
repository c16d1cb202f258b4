/**
 * The request pipeline's stages, one behaviour each: parse once, gate (key,
 * then rate), find (a stored answer or a join), reply, log. Warm requests
 * are answered without a promise; no key is trusted for any time; the caches
 * hold data within their byte bounds, and what clients send (huge keys,
 * endless distinct URLs) does not grow memory.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApi } from '../../src/api/handler.ts';
import { isPromise } from '../../src/shared/maybe.ts';
import type { ApiReply } from '../../src/http/reply.ts';
import { GRACE_PERIODS, Keys } from '../../src/keys/rules.ts';
import { keyId } from '../../src/keys/secrets.ts';
import { DiskData } from '../../adapters/_node/disk-data.ts';
import { SEARCH_ENTRY_BYTES, STORED_ANSWER_BYTES } from '../../src/store/archive.ts';
import { SqliteKeyBackend } from '../../src/keys/stores/sqlite.node.ts';
import { eventually } from '../helpers/http.ts';
import { heapUsed } from '../helpers/memory.ts';
import { SAMPLE_SOURCE } from '../helpers/paths.ts';
import { buildInto, tempDir } from '../helpers/temp.ts';

let dist: string;
let db: string;
let backend: SqliteKeyBackend;
let keys: Keys;

beforeAll(async () => {
  dist = await buildInto(SAMPLE_SOURCE, 'pipeline');
  db = path.join(await tempDir('pipeline-keys'), 'keys.db');
  backend = new SqliteKeyBackend(db);
  keys = new Keys(backend);
});
afterAll(() => backend?.close());

const get = (url: string, headers: Record<string, string> = {}) => ({
  method: 'GET',
  url,
  header: (name: string) => headers[name] ?? null,
});
const settle = async (out: ApiReply | Promise<ApiReply>) => await out;
let addresses = 0;
const newKey = () => keys.issue(`pipeline-${++addresses}@example.org`);

describe('the pipeline', () => {
  it('answers a warm request synchronously, and a cold one with a promise', async () => {
    const api = createApi({ data: new DiskData(dist), keys });
    const key = await newKey();
    const first = api.reply(get(`/person/name=Emma%20Stone/apikey=${key}`));
    expect(isPromise(first)).toBe(true);
    const cold = await first;
    const warm = api.reply(get(`/person/name=Emma%20Stone/apikey=${key}`));
    expect(isPromise(warm)).toBe(false);
    expect((warm as ApiReply).status).toBe(200);
    expect(
      Buffer.from((warm as ApiReply).body ?? new Uint8Array(0)).equals(Buffer.from(cold.body ?? new Uint8Array(0))),
    ).toBe(true);
    // Every kind of answer, once what it needs is warm: a join, a 404, a 304, a 403, a 400.
    const etag = (warm as ApiReply).headers.etag;
    const asks = [
      get(`/award/name=Actor/apikey=${key}`),
      get(`/person/name=Nobody/apikey=${key}`),
      get(`/person/name=Emma%20Stone/apikey=${key}`, { 'if-none-match': etag }),
      get('/person/name=Emma%20Stone/apikey=faa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'),
      get(`/archive/year=abc/apikey=${key}`),
    ];
    for (const ask of asks) {
      const once = await settle(api.reply(ask));
      const again = api.reply(ask);
      expect([ask.url, isPromise(again)]).toEqual([ask.url, false]);
      expect((again as ApiReply).status).toBe(once.status);
    }
  });

  it('refuses a revoked key on the next request', async () => {
    const api = createApi({ data: new DiskData(dist), keys });
    const key = await newKey();
    const url = `/archive/year=1930/apikey=${key}`;
    expect((await settle(api.reply(get(url)))).status).toBe(200);
    await keys.revokeKey(key);
    expect((await settle(api.reply(get(url)))).status).toBe(403);
  });

  it('refuses a key revoked by another process (the CLI) within a second', async () => {
    const api = createApi({ data: new DiskData(dist), keys });
    const key = await newKey();
    const url = `/archive/year=1930/apikey=${key}`;
    expect((await settle(api.reply(get(url)))).status).toBe(200);
    const cli = new SqliteKeyBackend(db, { view: false }); // another connection, as the CLI opens one
    try {
      await new Keys(cli).revokeKey(key);
    } finally {
      cli.close();
    }
    expect(await eventually(async () => (await settle(api.reply(get(url)))).status === 403, 1_000, 20)).toBe(true);
  });

  it('caps how long an answer may be kept at the time its key has left, and refuses the key at its end', async () => {
    let t = Date.now();
    const clocked = new Keys(backend, () => t);
    const api = createApi({ data: new DiskData(dist), keys: clocked, now: () => t });
    const email = `pipeline-grace-${++addresses}@example.org`;
    const old = await clocked.issue(email);
    const next = await clocked.rotate(email, GRACE_PERIODS['1h']).then((r) => r.key);
    const ask = (key: string, headers: Record<string, string> = {}) =>
      settle(api.reply(get(`/person/name=Emma%20Stone/apikey=${key}`, headers)));
    const first = await ask(old);
    expect([first.status, first.headers['cache-control']]).toEqual([200, 'private, max-age=3600']);
    expect((await ask(next)).headers['cache-control']).toBe('private, max-age=86400');
    t += GRACE_PERIODS['1h'] - 90_500;
    const late = await ask(old);
    expect([late.status, late.headers['cache-control']]).toEqual([200, 'private, max-age=90']);
    const notModified = await ask(old, { 'if-none-match': first.headers.etag });
    expect([notModified.status, notModified.headers['cache-control']]).toEqual([304, 'private, max-age=90']);
    t += 90_500;
    expect((await ask(old)).status).toBe(403);
    expect((await ask(next)).status).toBe(200);
  });

  it('asks the key store on every request: nothing is trusted for any time', async () => {
    let asked = 0;
    const counting = { verify: (key: string) => (asked++, keys.verify(key)) };
    const api = createApi({ data: new DiskData(dist), keys: counting });
    const key = await newKey();
    for (let i = 0; i < 5; i++) await settle(api.reply(get(`/archive/year=2026/apikey=${key}`)));
    expect(asked).toBe(5);
  });

  it("decodes the key segment once a request, for the gate, the shared cache's tag and the log alike", async () => {
    const lines: string[] = [];
    const api = createApi({
      data: new DiskData(dist),
      keys,
      log: (line) => lines.push(line),
      sharedCache: (policy) => ({ 'x-policy': JSON.stringify(policy) }),
    });
    const key = await newKey();
    // The key sent percent-encoded (its first letter as %66): every stage must still see the one key.
    const sent = `%${key.charCodeAt(0).toString(16)}${key.slice(1)}`;
    const url = `/archive/year=2026/apikey=${sent}`;
    await settle(api.reply(get(url))); // warm: the second request is the one counted
    const decodeSpy = vi.spyOn(globalThis, 'decodeURIComponent');
    try {
      const reply = await settle(api.reply(get(url)));
      expect(reply.status).toBe(200);
      expect(reply.headers['x-policy']).toContain('"keep":true');
      expect(decodeSpy.mock.calls.filter(([text]) => text === sent)).toHaveLength(1);
    } finally {
      decodeSpy.mockRestore();
    }
    expect(lines.at(-1)).toMatch(new RegExp(`^GET /archive/year=2026/apikey=${keyId(key)}\\.\\.\\. 200 `));
    expect(lines.join('\n')).not.toContain(key.slice(keyId(key).length));
  });

  it('checks the key before the rate, and the rate before the parameters', async () => {
    const api = createApi({ data: new DiskData(dist), keys, rateLimitPerMinute: 1 });
    const key = await newKey();
    expect((await settle(api.reply(get(`/archive/year=abc/apikey=${key}`)))).status).toBe(400);
    expect((await settle(api.reply(get(`/archive/year=abc/apikey=${key}`)))).status).toBe(429);
    expect((await settle(api.reply(get('/archive/year=abc/apikey=nope')))).status).toBe(403);
  });

  it('keeps searches with the stored answers, within their byte bound, and answers right after evicting', async () => {
    // a few searches of the sample (each its entry and a few hundred bytes), not all
    const bound = 4 * SEARCH_ENTRY_BYTES;
    const api = createApi({ data: new DiskData(dist), keys, rateLimitPerMinute: 1e9, answerBytes: bound });
    const key = await newKey();
    const lookups = [
      'emma',
      'stone',
      'the',
      'actor',
      'actress',
      'best',
      'picture',
      'song',
      'music',
      'film',
      'john',
      'mary',
      'director',
      'la',
    ].map((t) => `/search/name=${t}`);
    const first = new Map<string, string>();
    let held = 0;
    for (const lookup of lookups) {
      const out = await settle(api.reply(get(`${lookup}/apikey=${key}`)));
      expect([lookup, out.status]).toEqual([lookup, 200]);
      first.set(lookup, Buffer.from(out.body ?? new Uint8Array(0)).toString());
      held += SEARCH_ENTRY_BYTES + out.body!.length;
      expect(api.archive.answerBytes).toBeLessThanOrEqual(bound);
    }
    expect(api.archive.answerBytes).toBeGreaterThan(0);
    expect(held).toBeGreaterThan(bound * 3); // so some were evicted
    for (const lookup of lookups) {
      const again = await settle(api.reply(get(`${lookup}/apikey=${key}`)));
      expect([lookup, Buffer.from(again.body ?? new Uint8Array(0)).toString()]).toEqual([lookup, first.get(lookup)]);
    }
  });

  it('keeps stored answers within their byte bound, and answers the same after evicting', async () => {
    const bound = 2 * STORED_ANSWER_BYTES; // two answers, fewer than the sample's ceremonies
    const api = createApi({ data: new DiskData(dist), keys, rateLimitPerMinute: 1e9, answerBytes: bound });
    const key = await newKey();
    const first = new Map<number, string>();
    for (let year = 1929; year <= 2026; year++) {
      const out = await settle(api.reply(get(`/archive/year=${year}/apikey=${key}`)));
      if (out.status === 200) first.set(year, Buffer.from(out.body!).toString());
      expect(api.archive.answerBytes).toBeLessThanOrEqual(bound);
    }
    expect(first.size).toBeGreaterThan(2);
    expect(api.archive.answerBytes).toBe(bound);
    for (const [year, body] of first) {
      const again = await settle(api.reply(get(`/archive/year=${year}/apikey=${key}`)));
      expect([year, Buffer.from(again.body!).toString()]).toEqual([year, body]);
    }
  });

  it('keeps parsed index files within their byte bound, and answers the same after evicting', async () => {
    // Room for a few of the files these lookups parse (name shards, the category index), not all.
    const bound = 8 * 1024;
    const api = createApi({ data: new DiskData(dist), keys, rateLimitPerMinute: 1e9, jsonBytes: bound });
    const unbounded = createApi({ data: new DiskData(dist), keys, rateLimitPerMinute: 1e9 });
    const key = await newKey();
    const lookups = [
      'Emil%20Jannings',
      'Janet%20Gaynor',
      'Richard%20Barthelmess',
      'Nobody%20At%20All',
      'Wings',
      'Emma%20Stone',
      'Sinners',
      'Someone%20Else',
    ]
      .map((name) => `/person/name=${name}`)
      .concat(
        ['Actor', 'Actress', 'Picture', 'e'].flatMap((text) => [
          `/award/name=${text}`,
          `/award/name=${text}/year=1929`,
          `/award/name=${text}/year=2026`,
        ]),
      );
    const first = new Map<string, string>();
    let most = 0;
    for (const lookup of lookups) {
      const out = await settle(api.reply(get(`${lookup}/apikey=${key}`)));
      first.set(lookup, `${out.status} ${Buffer.from(out.body ?? new Uint8Array(0)).toString()}`);
      most = Math.max(most, api.archive.parsedBytes);
      expect(api.archive.parsedBytes).toBeLessThanOrEqual(bound);
      await settle(unbounded.reply(get(`${lookup}/apikey=${key}`)));
    }
    expect(most).toBeGreaterThan(bound / 2);
    expect(unbounded.archive.parsedBytes).toBeGreaterThan(bound * 2); // so files were evicted
    for (const lookup of lookups) {
      const again = await settle(api.reply(get(`${lookup}/apikey=${key}`)));
      expect([lookup, `${again.status} ${Buffer.from(again.body ?? new Uint8Array(0)).toString()}`]).toEqual([
        lookup,
        first.get(lookup),
      ]);
    }
  });

  it('hashes a file once when many requests for it arrive together, cold', async () => {
    const api = createApi({ data: new DiskData(dist), keys, rateLimitPerMinute: 1e9 });
    const key = await newKey();
    const digest = vi.spyOn(crypto.subtle, 'digest');
    try {
      const replies = await Promise.all(
        Array.from({ length: 20 }, () => settle(api.reply(get(`/archive/year=2026/apikey=${key}`)))),
      );
      expect(new Set(replies.map((r) => r.status))).toEqual(new Set([200]));
      const hashed = digest.mock.calls.map(([, data]) => Buffer.from(data as Uint8Array).toString('base64'));
      expect(hashed.length).toBeGreaterThan(0);
      expect(new Set(hashed).size).toBe(hashed.length); // no content hashed twice: one read, one hash
    } finally {
      digest.mockRestore();
    }
  });

  it('does not grow memory on anonymous requests with huge keys', async () => {
    const api = createApi({ data: new DiskData(dist), keys });
    const before = heapUsed();
    for (let i = 0; i < 10_000; i++) {
      const huge = `faa_${String(i).padStart(6, '0')}${'x'.repeat(15 * 1024)}`;
      const out = api.reply(get(`/person/name=Emma%20Stone/apikey=${huge}`));
      expect(isPromise(out) ? 0 : out.status).toBe(403);
    }
    expect(api.limiter.size).toBe(0); // a refused key never opens a rate window
    expect(heapUsed() - before).toBeLessThan(4 * 1024 * 1024);
  });

  it('does not grow memory on endless distinct URLs with a valid key', async () => {
    const api = createApi({ data: new DiskData(dist), keys, rateLimitPerMinute: 1e9 });
    const key = await newKey();
    await settle(api.reply(get(`/person/name=Emma%20Stone/apikey=${key}`))); // shards and manifest warm
    const before = heapUsed();
    for (let i = 0; i < 20_000; i++) {
      const out = await settle(api.reply(get(`/person/name=Nobody%20${i}${'y'.repeat(200)}/apikey=${key}`)));
      expect(out.status).toBe(404);
    }
    expect(heapUsed() - before).toBeLessThan(4 * 1024 * 1024);
  });
});
