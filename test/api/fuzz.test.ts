/**
 * Property-based fuzzing of request paths (fast-check): random segments,
 * bytes and percent-encodings, `..` and `%2e%2e`, NUL, overlong names and
 * years, duplicate and missing segments, mixed-case route names, with valid
 * and invalid keys; through the core in-process and over loopback HTTP.
 */
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi, describeService, type Api } from '../../src/api/handler.ts';
import { Keys } from '../../src/keys/rules.ts';
import { DiskData } from '../../adapters/_node/disk-data.ts';
import { decodedBody, rawRequest } from '../helpers/http.ts';
import { type KeyRecord, keyWatchingLog, makeKeys, memoryKeys, storeKeys, unissuedKey } from '../helpers/keys.ts';
import { ROOT } from '../helpers/paths.ts';
import { listen, type Running, sampleSandbox, type Sandbox } from '../helpers/servers.ts';

/** Every status the API documents for these routes (500 only on a damaged dist/, which this dist is not). */
const STATUSES = new Set([200, 204, 304, 400, 403, 404, 405, 429]);
const ROOTS = ['archive', 'oscars', 'person', 'movie', 'award'];

let box: Sandbox;
let validKey: string;
let revokedKey: string;
let api: Api;
let http: Running;
const coreLog = keyWatchingLog();
const httpLog = keyWatchingLog();
/** Files that must never come back as a body: outside the data folder, or the private index inside it. */
const forbidden: Buffer[] = [];
/** Files dist/ publishes on purpose (the reference page, OpenAPI, the portal). */
const publicBodies: Buffer[] = [];
/** The service description of the sandbox's archive (its years and source revision come from its manifest). */
let description: Buffer;
/** Statuses seen, so the generators are known to reach every branch. */
const seen = { core: new Map<number, number>(), http: new Map<number, number>() };
const count = (m: Map<number, number>, status: number) => m.set(status, (m.get(status) ?? 0) + 1);

beforeAll(async () => {
  box = await sampleSandbox('fuzz');
  description = Buffer.from(
    JSON.stringify(describeService(JSON.parse(await readFile(path.join(box.dist, '_data/manifest.json'), 'utf8')))),
  );
  const made = makeKeys(2, 'fuzz');
  [validKey, revokedKey] = made.keys;
  const records: KeyRecord[] = [made.records[0], { ...made.records[1], revokedAt: 1 }];
  api = createApi({
    data: new DiskData(box.dist, { revalidateMs: 60_000 }),
    keys: new Keys(memoryKeys(records)),
    rateLimitPerMinute: 1e9,
    log: coreLog.log,
  });
  storeKeys(box.keysDb, records);
  http = await listen({ dist: box.dist, keysDb: box.keysDb, rateLimitPerMinute: 1_000_000, log: httpLog.log });

  for (const file of [
    path.join(ROOT, 'package.json'),
    path.join(ROOT, 'tsconfig.json'),
    '/etc/passwd',
    box.keysDb,
    path.join(box.dist, '_data/manifest.json'),
  ]) {
    const bytes = await readFile(file).catch(() => null);
    if (bytes) forbidden.push(bytes);
  }
  for (const entry of await readdir(box.dist, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    if (entry.isFile() && !path.relative(box.dist, full).startsWith('_data')) publicBodies.push(await readFile(full));
  }
}, 60_000);

afterAll(async () => {
  await http?.close();
  await box?.remove();
});

// ---- path generators -------------------------------------------------------

const hex = (b: number) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`;
/** Raw bytes, percent-encoded. */
const percentBytes = fc.uint8Array({ minLength: 1, maxLength: 12 }).map((bs) => [...bs].map(hex).join(''));
const malformed = fc.constantFrom(
  '%',
  '%G0',
  '%C3',
  '%E2%82',
  '%ZZ',
  '%%',
  '%2',
  '%00',
  '%FF%FE',
  '%C0%AE',
  '%ED%A0%80',
);
const traversal = fc.constantFrom(
  '..',
  '.',
  '%2e%2e',
  '%2E%2E',
  '%2e%2e%2f',
  '..%2f..%2fpackage.json',
  '../../package.json',
  '..\\..\\package.json',
  '%2e%2e%5c',
  '/etc/passwd',
  '%2Fetc%2Fpasswd',
  '_data',
  '_data%2Fmanifest.json',
  'keys.json',
  '\0',
  '%00',
);
const text = fc.string({ unit: 'binary', maxLength: 16 });
const mixedCase = (words: string[]) =>
  fc
    .constantFrom(...words)
    .chain((w) =>
      fc
        .array(fc.boolean(), { minLength: w.length, maxLength: w.length })
        .map((up) => [...w].map((c, i) => (up[i] ? c.toUpperCase() : c)).join('')),
    );
const piece = fc.oneof(text, percentBytes, malformed, traversal);

const nameValue = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'Emma Stone',
      'Emma%20Stone',
      'Sinners',
      'Actor',
      'Metro-Goldwyn-Mayer',
      'Fox',
      'Outstanding%20Picture',
      'Timoth%C3%A9e%20Chalamet',
      'a',
      'e',
    ),
  },
  { weight: 3, arbitrary: fc.array(piece, { maxLength: 4 }).map((ps) => ps.join('')) },
  { weight: 1, arbitrary: fc.integer({ min: 500, max: 3000 }).map((n) => 'x'.repeat(n)) },
  { weight: 1, arbitrary: fc.integer({ min: 500, max: 600 }).map((n) => '%C3%A9'.repeat(n)) },
  { weight: 1, arbitrary: fc.integer({ min: 500, max: 600 }).map((n) => '\u{1F3AC}'.repeat(n)) },
);
const yearValue = fc.oneof(
  fc.constantFrom(
    '1929',
    '1930',
    '2026',
    '1928',
    '2027',
    '0',
    '00002026',
    '-1',
    '+2026',
    '1e3',
    '2026.0',
    '%202026',
    '%EF%BC%92%EF%BC%90%EF%BC%92%EF%BC%96',
    '99999999999',
    '9'.repeat(40),
    '',
    '0x7EA',
  ),
  fc.integer({ min: -1_000_000, max: 10_000_000_000 }).map(String),
  piece,
);
const paramSegment = fc.oneof(
  { weight: 4, arbitrary: nameValue.map((v) => `name=${v}`) },
  { weight: 4, arbitrary: yearValue.map((v) => `year=${v}`) },
  { weight: 1, arbitrary: fc.tuple(mixedCase(['name', 'year']), nameValue).map(([p, v]) => `${p}=${v}`) },
  { weight: 2, arbitrary: piece },
  { weight: 1, arbitrary: fc.constant('') },
);
const rootSegment = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...ROOTS) },
  { weight: 2, arbitrary: mixedCase(ROOTS) },
  { weight: 2, arbitrary: piece },
  { weight: 1, arbitrary: fc.constantFrom('', 'openapi.json', 'index.html', 'portal', 'package.json') },
);

type KeyClass = 'valid' | 'valid-encoded' | 'revoked' | 'unissued' | 'garbage' | 'none' | 'mixed-case-label';
const keyClass = fc.constantFrom<KeyClass>(
  'valid',
  'valid',
  'valid',
  'valid-encoded',
  'revoked',
  'unissued',
  'garbage',
  'none',
  'mixed-case-label',
);
const tail = fc.constantFrom('', '', '', '/', '//', '?x=1', '?apikey=nothing', '#frag', '/..', '/%2e%2e', '/.');
const prefix = fc.constantFrom('/', '/', '/', '/', '//', '/./', '/../', '/%2e%2e/', '/x/../');
const method = fc.constantFrom(
  'GET',
  'GET',
  'GET',
  'GET',
  'GET',
  'HEAD',
  'OPTIONS',
  'POST',
  'PUT',
  'DELETE',
  'PATCH',
  'get',
  'TRACE',
);
const acceptEncoding = fc.constantFrom(
  undefined,
  'br',
  'gzip',
  'gzip, br',
  'identity',
  '*',
  'br;q=0, gzip',
  'x;;;q=,,',
);

const request = fc.record({
  method,
  prefix,
  root: rootSegment,
  params: fc.array(paramSegment, { maxLength: 4 }),
  keyClass,
  garbageKey: piece,
  tail,
  acceptEncoding,
  ifNoneMatch: fc.option(fc.constantFrom('*', '"0000"', 'W/"x", "y"', ''), { nil: undefined }),
});
type Generated = typeof request extends fc.Arbitrary<infer T> ? T : never;

function keySegment(g: Generated): string | null {
  switch (g.keyClass) {
    case 'valid':
      return `apikey=${validKey}`;
    case 'valid-encoded':
      return `apikey=${validKey.replace(/[a-z]/g, (c) => hex(c.charCodeAt(0)))}`;
    case 'revoked':
      return `apikey=${revokedKey}`;
    case 'unissued':
      return `apikey=${unissuedKey()}`;
    case 'garbage':
      return `apikey=${g.garbageKey}`;
    case 'mixed-case-label':
      return `apiKey=${g.garbageKey}`;
    case 'none':
      return null;
  }
}

function pathOf(g: Generated): string {
  const key = keySegment(g);
  return g.prefix + [g.root, ...g.params, ...(key === null ? [] : [key])].join('/') + g.tail;
}

/**
 * What may go on the wire in a request line: everything outside printable ASCII percent-encoded (as a client would).
 */
const wireSafe = (p: string) =>
  Buffer.from(p, 'utf8').reduce((out, b) => out + (b > 0x20 && b < 0x7f ? String.fromCharCode(b) : hex(b)), '');

/** The properties every answer must have. */
function check(
  g: Generated,
  reply: { status: number; headers: Record<string, string>; body: Buffer },
  isPublic: (b: Buffer) => boolean,
): void {
  const where = `${g.method} ${pathOf(g).slice(0, 300)} -> ${reply.status} ${reply.body.subarray(0, 200).toString()}`;
  expect(STATUSES.has(reply.status), where).toBe(true);
  const head = g.method.toUpperCase() === 'HEAD';
  if (head || reply.status === 204 || reply.status === 304) {
    expect(reply.body.length, where).toBe(0);
    return;
  }
  const body = decodedBody(reply.body, reply.headers['content-encoding']);
  if (reply.status >= 400) {
    const parsed = JSON.parse(body.toString('utf8'));
    expect(typeof parsed.error, where).toBe('string');
    if (reply.status === 429) expect(Number(reply.headers['retry-after']), where).toBeGreaterThanOrEqual(1);
    return;
  }
  // 200
  for (const f of forbidden) expect(body.equals(f), `${where}: served a private file`).toBe(false);
  const keyed = g.keyClass === 'valid' || g.keyClass === 'valid-encoded';
  if (body.equals(description) || isPublic(body)) return;
  expect(keyed, `${where}: archive data without a valid key`).toBe(true);
  const value = JSON.parse(body.toString('utf8'));
  expect(typeof value === 'object' && value !== null, where).toBe(true);
}

describe('fuzzed paths', () => {
  it('through the core get only documented statuses, JSON errors, and data only with a valid key', async () => {
    await fc.assert(
      fc.asyncProperty(request, async (g) => {
        const headers: Record<string, string | undefined> = {
          'accept-encoding': g.acceptEncoding,
          'if-none-match': g.ifNoneMatch,
        };
        const out = await api.reply({ method: g.method, url: pathOf(g), header: (n) => headers[n] });
        const h: Record<string, string> = {};
        for (const [k, v] of Object.entries(out.headers)) h[k.toLowerCase()] = v;
        count(seen.core, out.status);
        check(g, { status: out.status, headers: h, body: Buffer.from(out.body ?? new Uint8Array(0)) }, () => false);
      }),
      { numRuns: 4000, seed: 20260301 },
    );
    for (const status of [200, 204, 400, 403, 404, 405])
      expect(seen.core.get(status), `status ${status} never seen: ${[...seen.core]}`).toBeGreaterThan(0);
  });

  it('over HTTP get only documented statuses, JSON errors, and data or public files only as they should', async () => {
    await fc.assert(
      fc.asyncProperty(request, async (g) => {
        const headers: Record<string, string> = {};
        if (g.acceptEncoding) headers['accept-encoding'] = g.acceptEncoding;
        if (g.ifNoneMatch !== undefined) headers['if-none-match'] = g.ifNoneMatch;
        const reply = await rawRequest(http.port, g.method.toUpperCase(), wireSafe(pathOf(g)), headers);
        count(seen.http, reply.status);
        check(g, reply, (b) => publicBodies.some((p) => p.equals(b)));
      }),
      { numRuns: 2000, seed: 20260302 },
    );
    for (const status of [200, 400, 403, 404])
      expect(seen.http.get(status) ?? 0, `status ${status} never seen: ${[...seen.http]}`).toBeGreaterThan(0);
  });

  it('traversal attempts never reach files outside the data folder', async () => {
    const attempts = [
      '/../package.json',
      '/..%2fpackage.json',
      '/%2e%2e/package.json',
      '/%2e%2e%2fpackage.json',
      '/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd',
      '/../../../../etc/passwd',
      '/_data/manifest.json',
      '/_data%2Fmanifest.json',
      '/%5fdata/manifest.json',
      '/../keys.json',
      '/..%2Fkeys.json',
      '/.%2e/keys.json',
      '/%2e%2e/%2e%2e/package.json',
      '/..%5c..%5cpackage.json',
      '/%00../package.json',
      '/package.json%00.html',
      '/openapi.json/..%2f..%2fkeys.json',
      `/person/name=..%2F..%2Fkeys.json/apikey=${'{key}'}`,
      `/archive/year=..%2F..%2Fpackage.json/apikey=${'{key}'}`,
    ];
    for (const attempt of attempts) {
      const reply = await rawRequest(http.port, 'GET', attempt.replace('{key}', validKey));
      expect(STATUSES.has(reply.status), attempt).toBe(true);
      for (const f of forbidden) expect(reply.body.equals(f), attempt).toBe(false);
    }
  });

  it('logs no whole key, in the core or the server', () => {
    expect(coreLog.count).toBeGreaterThanOrEqual(4000);
    expect(httpLog.count).toBeGreaterThanOrEqual(600);
    expect(coreLog.leaks).toEqual([]);
    expect(httpLog.leaks).toEqual([]);
  });

  // A working key sent under a misspelt label is still a working key: it must not land in the log whole.
  it('logs no whole key when the key is sent under a misspelt or encoded label', async () => {
    const log = keyWatchingLog();
    const {
      keys: [key],
      records,
    } = makeKeys(1, 'label');
    const core = createApi({ data: new DiskData(box.dist), keys: new Keys(memoryKeys(records)), log: log.log });
    const paths = [
      `/person/name=Emma%20Stone/APIKEY=${key}`,
      `/person/name=Emma%20Stone/ApiKey=${key}`,
      `/person/name=Emma%20Stone/apikey%3D${key}`,
      `/person/name=Emma%20Stone/api%6Bey=${key}`,
      `/person/name=Emma%20Stone/key=${key}`,
      `/person/name=${key}`,
    ];
    for (const p of paths)
      expect([403, 404]).toContain((await core.reply({ method: 'GET', url: p, header: () => null })).status);
    expect(log.leaks).toEqual([]);
  });
});
