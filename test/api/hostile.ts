/**
 * Hostile input, for every place the API runs (the core, the Node server, the
 * edge function under Deno, the Worker under workerd): traversal in every
 * encoding, key bypass through public-file names, and fuzzed paths. What must
 * hold is said from the outside, without the service's own code: without a
 * valid key, a 200 is only ever a public file of the build or the service
 * description; with one, it is also an answer of the spec's shapes; never the
 * manifest, an index or a pack; every other status is documented and has a
 * JSON error body (or the CDN's own `Not Found` where netlify.toml keeps a
 * path from the edge function).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seeded } from '../helpers/random.ts';
import { decoded, type Target } from './behaviour.ts';
import type { RawReply } from '../helpers/http.ts';

/** Statuses the API documents; 500 only where a keyed lookup reads the stored answer the behaviour setup damaged. */
const STATUSES = new Set([200, 204, 304, 400, 403, 404, 405, 429, 500]);

/** Dot segments, plain and percent-encoded once, twice and three times, in both cases. */
export const DOTS = [
  '..',
  '.%2e',
  '%2e.',
  '%2e%2e',
  '%2E%2E',
  '%252e%252e',
  '%252E%252E',
  '%2e%252e',
  '%25252e%25252e',
  '%25252E%25252E',
];
/** What separates them from what follows: `/`, `\` and their encodings. */
export const SEPARATORS = ['/', '\\', '%2f', '%2F', '%5c', '%5C', '%252f', '%255C', '%25252f'];
/** Files that must never be read through a path. */
export const TARGETS = [
  '_data/manifest.json',
  '_data/',
  '_data',
  '%5fdata/manifest.json',
  '_data%2fmanifest.json',
  'package.json',
  'etc/passwd',
];
/** An encoded `?`, `#` or NUL before a public file's extension or name, or none. */
export const SUFFIXES = [
  '',
  '%3f.json',
  '%3F.html',
  '%23.css',
  '%253f.json',
  '%2523.html',
  '%25253f.js',
  '%00.json',
  '%2500.html',
  '%3f/index.html',
  '%23/portal.html',
  '%3fx=.svg',
  '?.json',
  '#.html',
];
/** What comes before: nothing, or a public file's or folder's name. */
export const PREFIXES = ['', '/index.html', '/openapi.json', '/portal', '/portal.css', '/x', '/_data', '/%2e'];

/** The audit's request and its near variants, always asked. */
const ALWAYS = [
  '/%252e%252e/_data/manifest.json',
  '/%252e%252e/_data/manifest.json%253f.json',
  '/%252e%252e/_data/manifest.json%3f.json',
  '/%252e%252e/_data/manifest.json%2523.html',
  '/x/%252e%252e/_data/manifest.json',
  '/index.html/%252e%252e/%252e%252e/_data/manifest.json',
  '/%2e%2e/_data/manifest.json',
  '/_data/manifest.json',
  '/_data%2fmanifest.json',
  '/%5fdata/manifest.json',
  '/%255fdata%252fmanifest.json',
  '/_data/manifest.json%00.json',
  '/..%5c_data%5cmanifest.json',
  '/%252e%252e%255c_data%255cmanifest.json%253f.json',
  '/portal/%252e%252e/_data/manifest.json',
  '/portal/%252e%252e%252f_data%252fmanifest.json%2523.css',
];

/**
 * Hostile paths: the fixed ones, then `count` drawn from the product
 * of the tables above, each with no key, a valid one or a bogus one.
 */
export function hostilePaths(count: number, seed = 20261124): { path: string; keyed: boolean }[] {
  const next = seeded(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)];
  const out = ALWAYS.flatMap((p) => [
    { path: p, keyed: false },
    { path: `${p}/apikey={key}`, keyed: true },
  ]);
  for (let i = 0; i < count; i++) {
    const sep = pick(SEPARATORS);
    const depth = 1 + Math.floor(next() * 3);
    const dots = Array.from({ length: depth }, () => pick(DOTS) + (next() < 0.5 ? sep : '/')).join('');
    const core = `${pick(PREFIXES)}/${dots}${pick(TARGETS)}${pick(SUFFIXES)}`;
    const key = pick(['none', 'valid', 'bogus'] as const);
    out.push({
      path: key === 'none' ? core : `${core}/apikey=${key === 'valid' ? '{key}' : 'faa_not-a-key'}`,
      keyed: key === 'valid',
    });
  }
  return out;
}

/**
 * What the test knows of a build: the bodies it publishes on
 * purpose, and every stored file, which no path may return whole.
 */
export interface Published {
  publicBodies: Buffer[];
  stored: Buffer[];
}

export async function published(dist: string): Promise<Published> {
  const out: Published = { publicBodies: [], stored: [] };
  for (const entry of await readdir(dist, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    const bytes = await readFile(full);
    (path.relative(dist, full).split(path.sep)[0] === '_data' ? out.stored : out.publicBodies).push(bytes);
  }
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNomination = (n: unknown) => isObject(n) && Array.isArray(n.primary) && typeof n.won === 'boolean';
const isMatch = (m: unknown) =>
  isObject(m) &&
  typeof m.category === 'string' &&
  (isNomination(m.nomination) || (Array.isArray(m.nominations) && m.nominations.every(isNomination)));

/**
 * Whether a body is an answer of the spec's shapes (section 2): the whole archive, a ceremony, or an array of matches.
 */
function answerShaped(body: Buffer): boolean {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return false;
  }
  if (Array.isArray(value)) return value.every(isMatch);
  return (
    isObject(value) &&
    Object.entries(value).every(
      ([year, categories]) => /^\d{4}$/.test(year) && Array.isArray(categories) && categories.every(isMatch),
    )
  );
}

/** Whether a body is the service description at `/`. */
function isDescription(body: Buffer): boolean {
  try {
    const value = JSON.parse(body.toString('utf8'));
    return (
      isObject(value) &&
      value.name === 'Film Awards Archive API' &&
      Array.isArray(value.endpoints) &&
      !('format' in value)
    );
  } catch {
    return false;
  }
}

/** Checks one reply as the header comment says; `where` names the request in a failure. */
export function checkReply(reply: RawReply, keyed: boolean, files: Published, where: string, head = false): void {
  const at = `${where} -> ${reply.status} ${reply.body.subarray(0, 120).toString()}`;
  expect(STATUSES.has(reply.status), at).toBe(true);
  if (head || reply.status === 204 || reply.status === 304) return;
  const body = decoded(reply);
  if (reply.status !== 200) {
    // Ours are JSON; the local CDN stand-in in front of the edge function
    // answers paths netlify.toml keeps from it (`/portal/*`) with its own text.
    if (body.toString('utf8') !== 'Not Found')
      expect(typeof JSON.parse(body.toString('utf8')).error, at).toBe('string');
    expect(keyed || reply.status !== 500, `${at}: a 500 without a key`).toBe(true);
    return;
  }
  expect(body.includes('"format":'), `${at}: served the manifest`).toBe(false);
  if (files.publicBodies.some((b) => b.equals(body)) || isDescription(body)) return;
  expect(keyed, `${at}: archive data without a valid key`).toBe(true);
  expect(answerShaped(body), `${at}: served something that is not an answer`).toBe(true);
  expect(
    files.stored.some((b) => b.equals(body) && !answerShaped(b)),
    `${at}: served a stored index or pack`,
  ).toBe(false);
}

/** Random paths of the pieces above, segments and bytes, for the fuzz test. */
const piece = fc.oneof(
  fc.constantFrom(
    ...DOTS,
    ...SEPARATORS,
    ...TARGETS,
    ...SUFFIXES,
    'index.html',
    'openapi.json',
    'portal',
    'archive',
    'person',
    'name=',
    'year=2026',
    'apikey=',
  ),
  fc
    .uint8Array({ minLength: 1, maxLength: 6 })
    .map((bs) => [...bs].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')),
  fc.string({ maxLength: 6 }).map((s) => encodeURIComponent(s)),
);
const fuzzedPath = fc
  .tuple(fc.array(piece, { minLength: 1, maxLength: 8 }), fc.constantFrom('none', 'valid', 'bogus'))
  .map(([pieces, key]) => ({
    path: `/${pieces.join('')}${key === 'none' ? '' : `/apikey=${key === 'valid' ? '{key}' : 'faa_not-a-key'}`}`,
    keyed: key === 'valid',
  }));

export interface HostileOptions {
  /** The build the target serves. */
  dist: () => string;
  /** Paths drawn from the tables; default 1,500. */
  count?: number;
  /** Fuzzed paths; default 400. */
  fuzzRuns?: number;
}

/**
 * Hostile paths asked at once: the servers answer each over loopback,
 * and one at a time most of the wall time was the round trip.
 */
const AT_ONCE = 8;

/**
 * The suite: a fresh key every 51 keyed requests, so the rate limit (60 a
 * minute) never hides what a path would answer, even with {@link AT_ONCE}
 * requests in flight.
 */
export function hostileSuite(name: string, target: () => Target, options: HostileOptions) {
  let files: Published;
  // The key is chosen before any await, so requests in flight at once never issue two keys for one turn.
  const keys: { key: Promise<string> | null; used: number } = { key: null, used: 0 };
  const keyFor = () => {
    if (!keys.key || keys.used++ >= 50) Object.assign(keys, { key: target().issueKey(), used: 0 });
    return keys.key!;
  };
  const ask = async ({ path: p, keyed }: { path: string; keyed: boolean }, method = 'GET') => {
    const sent = p.includes('{key}') ? p.replace('{key}', await keyFor()) : p;
    checkReply(await target().request(method, sent), keyed, files, `${method} ${p}`, method === 'HEAD');
  };

  describe(`${name}: hostile input`, () => {
    it('reaches no stored file through any encoding of dot segments, separators, ?, # or NUL, with or without a key', async () => {
      files ??= await published(options.dist());
      const requests = hostilePaths(options.count ?? 1500);
      let next = 0;
      const asker = async () => {
        while (next < requests.length) await ask(requests[next++]);
      };
      await Promise.all(Array.from({ length: AT_ONCE }, asker)).catch((error: unknown) => {
        next = requests.length; // the other askers stop at their next turn
        throw error;
      });
    });

    it('answers the audit’s request with 404 and no data, for GET and HEAD', async () => {
      files ??= await published(options.dist());
      for (const method of ['GET', 'HEAD']) {
        const reply = await target().request(method, '/%252e%252e/_data/manifest.json');
        expect(reply.status).toBe(404);
        if (method === 'GET') expect(JSON.parse(decoded(reply).toString('utf8'))).toEqual({ error: 'Not Found' });
      }
    });

    it('gives fuzzed paths only documented statuses, and data only with a valid key', async () => {
      files ??= await published(options.dist());
      await fc.assert(
        fc.asyncProperty(fuzzedPath, async (request) => ask(request)),
        { numRuns: options.fuzzRuns ?? 400, seed: 20261125 },
      );
    });
  });
}
