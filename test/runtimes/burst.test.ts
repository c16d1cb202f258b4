/**
 * Bursts on the runtimes that tie I/O to the request that started it: the
 * Worker under wrangler dev (workerd, keys in a local D1) and the edge
 * function under Deno (keys in a local Blobs store). workerd refuses to let
 * one request await I/O another request began ("Cannot perform I/O on behalf
 * of a different request", a platform 500), so nothing in flight (a key
 * read, a file fetch, a stream) may be shared between requests. Each runtime
 * gets 20,000 requests, 8 to 32 at once, with one key and with many keys,
 * mixing lookups, searches, `/`, `/health` and portal calls: none may answer
 * 5xx. Every loop is bounded by its count and by a deadline (a burst cut
 * short must still have sent 1,000); each burst prints what it sent.
 *
 * That full size is `npm run test:stress` (BURST_REQUESTS=20000), about four
 * minutes of the two cores on its own. `npm test` runs the same bursts with
 * 2,000 requests a runtime (500 a burst): the old shared key read failed about
 * 1 in 50 at 8 at once, so a run of that size still meets it about ten times.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BlobsKeyStoreOptions, portalKeys } from '../../adapters/_netlify/blobs-keys.ts';
import type { Archive } from '../../src/shared/types.ts';
import { startBlobs } from '../helpers/blobs.ts';
import { keyThroughPortal } from '../helpers/keys.ts';
import { type MailApi, startMailApi } from '../helpers/mail.ts';
import { startEdge, startWorker } from '../helpers/processes.ts';
import { sampleSandbox, type Sandbox } from '../helpers/servers.ts';
import { lostKeptAliveSocket } from '../helpers/http.ts';
import { wholeNumberSetting } from '../../src/shared/limits.ts';

/**
 * Requests per runtime, in four bursts: one key at 8 and at 32
 * at once, many keys at 8 and at 32 (BURST_REQUESTS, see above).
 */
const TOTAL = wholeNumberSetting('BURST_REQUESTS', process.env.BURST_REQUESTS, 2_000, 4, 1_000_000);
const BURSTS = [
  { keys: 'one', concurrency: 8 },
  { keys: 'one', concurrency: 32 },
  { keys: 'many', concurrency: 8 },
  { keys: 'many', concurrency: 32 },
] as const;
/** Keys of the "many" bursts. */
const MANY = 16;
/**
 * No burst runs longer than this, whatever the runtime's speed: wrangler
 * dev on a busy 2-core machine answers about 20 to 30 a second.
 */
const BURST_DEADLINE_MS = 300_000;
/**
 * A burst cut short by its deadline must still have sent this many (the old key
 * cache failed about 1 in 50 at 8 at once): 1,000, or all of a smaller burst.
 */
const AT_LEAST = Math.min(1_000, Math.ceil(TOTAL / BURSTS.length));

const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

/** Requests sent again because the kept-alive connection they reused was being closed (see lostKeptAliveSocket). */
let resent = 0;

/** One request's status (0: no answer within 30 s) and, for a 5xx, the start of its body. */
function ask(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
  again = true,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8').slice(0, 200) }),
      );
      res.on('error', (error) => resolve({ status: 0, text: String(error) }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 30 s')));
    req.on('error', (error) => {
      if (!again || !lostKeptAliveSocket(req, method, error)) return resolve({ status: 0, text: String(error) });
      resent++;
      resolve(ask(port, method, path, headers, body, false));
    });
    req.end(body);
  });
}

/** What the bursts ask for, learned from the archive the runtime serves. */
interface Paths {
  names: string[];
  films: [string, string][];
  categories: string[];
  years: string[];
}

function pathsOf(archive: Archive): Paths {
  const names = new Set<string>();
  const films = new Map<string, [string, string]>();
  const categories = new Set<string>();
  for (const [year, ceremony] of Object.entries(archive)) {
    for (const { category, nominations } of ceremony) {
      categories.add(category);
      for (const n of nominations) {
        for (const name of n.primary) names.add(name);
        for (const film of n.secondary ?? []) films.set(`${film}\u0000${year}`, [film, year]);
      }
    }
  }
  return { names: [...names], films: [...films.values()], categories: [...categories], years: Object.keys(archive) };
}

/**
 * The i-th request of a burst: mostly lookups and searches (some
 * repeated, some new), and `/`, `/health` and portal calls.
 */
function requestOf(
  i: number,
  key: string,
  p: Paths,
  session: string | undefined,
): { method: string; path: string; headers: Record<string, string>; body?: string } {
  const pick = <T>(list: T[]) => list[Math.floor(i / 13) % list.length];
  const k = `apikey=${key}`;
  const get = (path: string, headers: Record<string, string> = {}) => ({ method: 'GET', path, headers });
  switch (i % 13) {
    case 0:
    case 1:
      return get(`/person/name=${encodeURIComponent(pick(p.names))}/${k}`);
    case 2: {
      const [film, year] = pick(p.films);
      return get(`/movie/name=${encodeURIComponent(film)}/year=${year}/${k}`);
    }
    case 3:
      return get(`/award/name=${encodeURIComponent(pick(p.categories).slice(0, 6))}/${k}`);
    case 4:
      return get(`/archive/year=${pick(p.years)}/${k}`);
    case 5:
      return get(`/search/name=${encodeURIComponent(pick(p.names).slice(0, 5))}/${k}`);
    case 6:
      // A search never asked before: the answer cache misses every time.
      return get(`/search/name=${encodeURIComponent(`${pick(p.names).slice(0, 4)} ${i}`)}/${k}`);
    case 7:
      return get(`/categories/${k}`, { 'accept-encoding': 'gzip, br' });
    case 8:
      return get('/health');
    case 9:
      return get('/', { accept: i % 2 ? 'text/html' : 'application/json' });
    case 10:
      return {
        method: 'POST',
        path: '/portal/account',
        headers: { authorization: `Bearer ${session ?? 'none'}`, 'content-type': 'application/json' },
        body: '{}',
      };
    case 11:
      return {
        method: 'POST',
        path: '/portal/session',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: `not-a-token-${i}` }),
      };
    default:
      return get(`/person/name=${encodeURIComponent(pick(p.names))}/apikey=faa_${String(i).padStart(32, '0')}`);
  }
}

interface Tally {
  requests: number;
  fiveHundreds: number;
  unanswered: number;
  statuses: Record<number, number>;
  samples: string[];
}

/** `count` requests, `concurrency` at once, each with one of `keys` (in turn); stops at the deadline. */
async function burst(
  port: number,
  count: number,
  concurrency: number,
  keys: string[],
  p: Paths,
  sessions: Map<string, string>,
): Promise<Tally> {
  const tally: Tally = { requests: 0, fiveHundreds: 0, unanswered: 0, statuses: {}, samples: [] };
  const deadline = Date.now() + BURST_DEADLINE_MS;
  let next = 0;
  const worker = async () => {
    while (next < count && Date.now() < deadline) {
      const i = next++;
      const key = keys[i % keys.length];
      const { method, path, headers, body } = requestOf(i, key, p, sessions.get(key));
      const { status, text } = await ask(port, method, path, headers, body);
      tally.requests++;
      tally.statuses[status] = (tally.statuses[status] ?? 0) + 1;
      if (status >= 500) tally.fiveHundreds++;
      if (status === 0) tally.unanswered++;
      if ((status >= 500 || status === 0) && tally.samples.length < 5)
        tally.samples.push(`${status} ${method} ${path.replace(/faa_\w+/, 'faa_…')}: ${text}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return tally;
}

/** The four bursts on one runtime, printed as they end. */
async function bursts(
  label: string,
  port: number,
  keys: string[],
  p: Paths,
  sessions: Map<string, string>,
): Promise<Tally[]> {
  const tallies: Tally[] = [];
  for (const { keys: which, concurrency } of BURSTS) {
    const tally = await burst(
      port,
      Math.ceil(TOTAL / BURSTS.length),
      concurrency,
      which === 'one' ? keys.slice(0, 1) : keys,
      p,
      sessions,
    );
    console.log(
      `${label}: ${tally.requests} requests, ${concurrency} at once, ${which} key${which === 'one' ? '' : 's'}: ${tally.fiveHundreds} 5xx, ${tally.unanswered} unanswered ${JSON.stringify(tally.statuses)}, ${resent} sent again on a new connection so far`,
    );
    tallies.push(tally);
  }
  return tallies;
}

/** The figures a failure shows: each burst's 5xx and a few of their bodies, and whether it sent enough. */
const summary = (tallies: Tally[]) =>
  tallies.map((t, i) => ({
    ...BURSTS[i],
    enough: t.requests >= AT_LEAST,
    fiveHundreds: t.fiveHundreds,
    unanswered: t.unanswered,
    samples: t.samples,
  }));
const expectNo5xx = (tallies: Tally[]) =>
  expect(summary(tallies)).toEqual(
    summary(tallies).map((t) => ({ ...t, enough: true, fiveHundreds: 0, unanswered: 0, samples: [] })),
  );

/** Keys had through the Worker's portal (so each has a session for portal calls), then the bursts. */
async function workerBursts(port: number, mailApi: MailApi): Promise<void> {
  const base = `http://127.0.0.1:${port}`;
  const sessions = new Map<string, string>();
  const keys: string[] = [];
  for (let i = 0; i < MANY; i++) {
    const { key, session } = await keyThroughPortal(base, mailApi);
    keys.push(key);
    sessions.set(key, session);
  }
  const archive = (await (await fetch(`${base}/archive/apikey=${keys[0]}`)).json()) as Archive;
  const tallies = await bursts('Worker', port, keys, pathsOf(archive), sessions);
  expectNo5xx(tallies);
}

/** Keys issued straight into the Blobs store the edge function reads, then the bursts. */
async function edgeBursts(port: number, access: BlobsKeyStoreOptions): Promise<void> {
  const store = portalKeys(access);
  const keys: string[] = [];
  for (let i = 0; i < MANY; i++)
    keys.push(await store.issue(`burst-${i}-${Math.random().toString(36).slice(2)}@example.org`));
  const archive = (await (await fetch(`http://127.0.0.1:${port}/archive/apikey=${keys[0]}`)).json()) as Archive;
  const tallies = await bursts('edge', port, keys, pathsOf(archive), new Map());
  expectNo5xx(tallies);
}

let box: Sandbox;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  box = await sampleSandbox('burst');
}, 120_000);
afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  agent.destroy();
  await box?.remove();
});

describe('bursts on the runtimes that tie I/O to one request', () => {
  it(`the Worker under wrangler dev answers ${TOTAL.toLocaleString('en')} requests, 8 to 32 at once, one key and many, with no 5xx`, async () => {
    const mailApi: MailApi = await startMailApi();
    stops.push(() => mailApi.stop());
    const worker = await startWorker(box.dist, {
      MAIL_API_URL: mailApi.url,
      MAIL_API_TOKEN: 'test-token',
      PORTAL_ISSUE_LIMIT_PER_MINUTE: '100000',
      RATE_LIMIT_PER_MINUTE: '1000000',
    });
    try {
      await workerBursts(worker.port, mailApi);
    } finally {
      await worker.stop();
    }
  }, 1_500_000);

  it(`the edge function under Deno answers ${TOTAL.toLocaleString('en')} requests, 8 to 32 at once, one key and many, with no 5xx`, async () => {
    const blobs = await startBlobs('burst-blobs');
    stops.push(() => blobs.stop());
    const edge = await startEdge(box.dist, { NETLIFY_BLOBS_CONTEXT: blobs.context, RATE_LIMIT_PER_MINUTE: '1000000' });
    try {
      await edgeBursts(edge.port, blobs.access);
    } finally {
      await edge.stop();
    }
  }, 1_500_000);
});
