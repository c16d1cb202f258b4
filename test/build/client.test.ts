import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { packClient } from '../../build/site/pack-client.ts';
import { ApiError, type Client, createClient, createOfflineClient, type HeldDataset, OFFLINE_ERRORS, parseRetryAfter, type ClientOptions } from '../../src/client/client.ts';
import { DATASET_FILE_NAME, ID_FORMS, ROUTES } from '../../src/shared/routes.ts';
import { tempDir } from '../helpers/temp.ts';
import { MESSAGES } from '../../src/shared/messages.ts';
import { type LocalServer, startLocalServer } from '../helpers/servers.ts';

let local: LocalServer;
beforeAll(async () => {
  local = await startLocalServer();
});
afterAll(() => local?.close());

/** A fetch that records what the client sent and can answer instead of the server. */
function recordingFetch(fake: (call: number) => Response | null = () => null) {
  const calls: { url: string; headers: Record<string, string>; status: number }[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    const url = String(input);
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    const response = fake(calls.length) ?? (await fetch(input, init));
    calls.push({ url, headers, status: response.status });
    return response;
  };
  return { fetch: wrapped, calls };
}

function client(extra: Partial<ClientOptions> = {}) {
  const sleeps: number[] = [];
  const api = createClient({
    baseUrl: local.baseUrl,
    apiKey: local.key,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...extra,
  });
  return { api, sleeps };
}

const errorOf = (promise: Promise<unknown>) => promise.then(() => expect.unreachable('expected an ApiError'), (e: unknown) => e as ApiError);

describe('the client', () => {
  it('answers each lookup with the typed result from the server', async () => {
    const { api } = client();
    const archive = await api.archive();
    expect(Object.keys(archive)).toContain('1930');
    const ceremony = await api.ceremony(1930);
    expect(ceremony).toEqual(archive['1930']);
    const person = await api.person('Emil Jannings');
    expect(person[0]).toMatchObject({ year: '1929', nomination: { primary: ['Emil Jannings'], won: true } });
    const film = await api.film('Wings', 1929);
    expect(film.map((m) => [m.category, m.nomination.primary])).toEqual([['Outstanding Picture', ['Wings']]]);
    const categories = await api.category('Actor');
    expect(categories.every((c) => c.category.includes('Actor'))).toBe(true);
    const atYear = await api.categoryAt('Picture', '1929');
    expect(atYear).toEqual(archive['1929'].filter((c) => c.category.includes('Picture')));
  });

  it('looks up a film and a person by IMDb id, and throws the API’s 400 and 404 for ids it cannot answer', async () => {
    const { api } = client();
    const wings = await api.titleById('tt0018578');
    expect(wings.map((m) => [m.year, m.category, m.nomination.primary])).toContainEqual(['1929', 'Outstanding Picture', ['Wings']]);
    expect(wings).toEqual(await api.person('Wings')); // on the sample only one film has that title
    expect(await api.nameById('nm0417837')).toEqual(await api.person('Emil Jannings'));
    expect(await errorOf(api.titleById('tt0000000'))).toMatchObject({ status: 404, message: 'Title not found', path: '/title/id=tt0000000/apikey=…' });
    expect(await errorOf(api.nameById('Emil Jannings'))).toMatchObject({ status: 400, message: MESSAGES.badNameId, path: '/name/id=Emil%20Jannings/apikey=…' });
  });

  it('searches by approximate name and lists every category name, each result counting what its lookup answers', async () => {
    const { api } = client();
    const results = await api.search('emma st');
    // A person the source gives an IMDb id is answered by it.
    expect(results[0]).toMatchObject({ name: 'Emma Stone', kind: 'person', id: 'nm1297015', path: '/name/id=nm1297015' });
    expect(results[0].nominations).toBe((await api.nameById(results[0].id!)).length);
    expect(await api.search('zzqxjvwk qqzzpx')).toEqual([]);
    expect(await errorOf(api.search(''))).toMatchObject({ status: 400, path: '/search/name=/apikey=…' });
    const list = await api.categories();
    const archive = await api.archive();
    expect(list.map((c) => c.name)).toEqual([...new Set(Object.values(archive).flatMap((ceremony) => ceremony.map((c) => c.category)))]);
    expect(list.find((c) => c.name === 'Outstanding Picture')).toMatchObject({ firstYear: '1929', path: '/award/name=Outstanding%20Picture' });
  });

  it('encodes each parameter into its segment and sends the key only in apikey=', async () => {
    const recorder = recordingFetch();
    const { api } = client({ fetch: recorder.fetch });
    await errorOf(api.film('AC/DC & Friends', 1930));
    expect(recorder.calls[0].url).toBe(`${local.baseUrl}/movie/name=AC%2FDC%20%26%20Friends/year=1930/apikey=${local.key}`);
  });

  it('answers a second call from its cache without asking again while the answer is fresh', async () => {
    const recorder = recordingFetch();
    const { api } = client({ fetch: recorder.fetch });
    const first = await api.person('Emil Jannings');
    const second = await api.person('Emil Jannings');
    expect(second).toEqual(first);
    expect(recorder.calls).toHaveLength(1);
  });

  it('revalidates a stale answer with If-None-Match and reuses its body on 304', async () => {
    const recorder = recordingFetch();
    let clock = 0;
    const { api } = client({ fetch: recorder.fetch, now: () => clock });
    const first = await api.ceremony(1930);
    clock += 2 * 86_400_000; // past max-age
    const second = await api.ceremony(1930);
    expect(recorder.calls.map((c) => c.status)).toEqual([200, 304]);
    expect(recorder.calls[1].headers['if-none-match']).toMatch(/^"[0-9a-f]{20}"$/);
    expect(second).toEqual(first);
  });

  it('waits out a 429 for Retry-After seconds, then retries', async () => {
    const recorder = recordingFetch((call) =>
      call === 0 ? Response.json({ error: MESSAGES.tooMany, limit: '60 requests per minute', retryAfter: 2 }, { status: 429, headers: { 'retry-after': '2' } }) : null,
    );
    const { api, sleeps } = client({ fetch: recorder.fetch });
    const person = await api.person('Emil Jannings');
    expect(sleeps).toEqual([2000]);
    expect(recorder.calls.map((c) => c.status)).toEqual([429, 200]);
    expect(person.length).toBeGreaterThan(0);
  });

  it('throws the 429 when Retry-After is longer than it is willing to wait', async () => {
    const recorder = recordingFetch(() => Response.json({ error: MESSAGES.tooMany }, { status: 429, headers: { 'retry-after': '600' } }));
    const { api, sleeps } = client({ fetch: recorder.fetch });
    const error = await errorOf(api.archive());
    expect(error).toMatchObject({ status: 429, message: MESSAGES.tooMany, retryAfter: 600 });
    expect(sleeps).toEqual([]);
  });

  it('retries a 500 after backing off', async () => {
    const recorder = recordingFetch((call) => (call === 0 ? Response.json({ error: MESSAGES.fetchError }, { status: 500 }) : null));
    const { api, sleeps } = client({ fetch: recorder.fetch, backoffMs: 100 });
    const film = await api.film('Wings', 1929);
    expect(recorder.calls.map((c) => c.status)).toEqual([500, 200]);
    expect(sleeps).toEqual([100]);
    expect(film.length).toBeGreaterThan(0);
  });

  it('backs off exponentially and gives up on a 500 after maxRetries', async () => {
    const recorder = recordingFetch(() => Response.json({ error: MESSAGES.fetchError }, { status: 500 }));
    const { api, sleeps } = client({ fetch: recorder.fetch, backoffMs: 100, maxRetries: 3 });
    const error = await errorOf(api.archive());
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 500, message: MESSAGES.fetchError });
    expect(sleeps).toEqual([100, 200, 400]);
    expect(recorder.calls).toHaveLength(4);
  });

  it('throws an ApiError with the API’s message on a 404', async () => {
    const { api } = client();
    const error = await errorOf(api.person('Nobody At All'));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 404, message: 'Person not found', path: '/person/name=Nobody%20At%20All/apikey=…' });
  });

  it('never puts the key in an error', async () => {
    const { api } = client();
    const notFound = await errorOf(api.person('Nobody At All'));
    const failing = createClient({
      baseUrl: local.baseUrl,
      apiKey: local.key,
      maxRetries: 0,
      fetch: async (input) => {
        throw new TypeError(`fetch failed for ${String(input)}`);
      },
    });
    const network = await errorOf(failing.person('Emil Jannings'));
    expect(network.status).toBe(0);
    expect(network.message).toContain('fetch failed for');
    for (const error of [notFound, network]) {
      const everything = `${error.message} ${error.stack} ${JSON.stringify(error)} ${error.path}`;
      expect(everything).not.toContain(local.key);
    }
  });

  it('answers 403 for a key the server does not know, without echoing it', async () => {
    const wrongKey = 'faa_' + 'x'.repeat(32);
    const api = createClient({ baseUrl: local.baseUrl, apiKey: wrongKey });
    const error = await errorOf(api.archive());
    expect(error).toMatchObject({ status: 403, message: MESSAGES.forbidden });
    expect(`${error.message} ${error.stack} ${error.path}`).not.toContain(wrongKey);
  });
});

describe('the offline client', () => {
  /** A fetch to the local server that can be cut, recording each request's path (key masked) and If-None-Match. */
  function network() {
    const state = { online: true, asked: [] as { path: string; ifNoneMatch: string | null }[], tamper: false };
    const fetcher: typeof fetch = async (input, init) => {
      if (!state.online) throw new TypeError('the network is cut');
      const url = new URL(String(input));
      state.asked.push({ path: url.pathname.replace(local.key, 'KEY'), ifNoneMatch: new Headers(init?.headers).get('if-none-match') });
      const response = await fetch(input, init);
      if (!state.tamper || !url.pathname.includes('file=')) return response;
      const bytes = new Uint8Array(await response.arrayBuffer());
      bytes[bytes.length - 2] ^= 1;
      return new Response(bytes, { status: response.status, headers: response.headers });
    };
    return { state, fetch: fetcher };
  }

  it('downloads the dataset once, then answers every lookup as the server does with the network cut', async () => {
    const net = network();
    const offline = await createOfflineClient({ baseUrl: local.baseUrl, apiKey: local.key, fetch: net.fetch });
    expect(net.state.asked.map((a) => a.path)).toEqual(['/dataset/apikey=KEY', '/dataset/file=oscars.ndjson/apikey=KEY']);
    net.state.online = false;
    const online = createClient({ baseUrl: local.baseUrl, apiKey: local.key });
    const calls: [string, (c: Client) => Promise<unknown>][] = [
      ['archive', (c) => c.archive()],
      ['ceremony', (c) => c.ceremony('01930')],
      ['person', (c) => c.person('Emil Jannings')],
      ['film', (c) => c.film('Wings', 1929)],
      ['category', (c) => c.category('Actor')],
      ['categoryAt', (c) => c.categoryAt('Picture', '1929')],
      ['titleById', (c) => c.titleById('tt0018578')],
      ['nameById', (c) => c.nameById('nm0417837')],
      ['categories', (c) => c.categories()],
    ];
    for (const [name, call] of calls) expect([name, JSON.stringify(await call(offline))]).toEqual([name, JSON.stringify(await call(online))]);
    for (const [name, call] of [['person', (c: Client) => c.person('Nobody')], ['ceremony', (c: Client) => c.ceremony('abc')], ['titleById', (c: Client) => c.titleById('nm1')]] as const) {
      const [mine, theirs] = [await errorOf(call(offline)), await errorOf(call(online))];
      expect([name, mine.status, mine.message]).toEqual([name, theirs.status, theirs.message]);
    }
    expect(net.state.asked).toHaveLength(2);
  });

  it('updates only when the service has another dataset, and asks with the ETag it holds', async () => {
    const net = network();
    const kept: HeldDataset[] = [];
    const store = { read: () => kept.at(-1) ?? null, write: (held: HeldDataset) => void kept.push(held) };
    await createOfflineClient({ baseUrl: local.baseUrl, apiKey: local.key, fetch: net.fetch, store });
    expect(kept).toHaveLength(1);
    // Held: a new client asks nothing; an update asks the list alone when it names the same file.
    net.state.asked.length = 0;
    const again = await createOfflineClient({ baseUrl: local.baseUrl, apiKey: local.key, fetch: net.fetch, store });
    expect(net.state.asked).toEqual([]);
    expect(await again.update()).toBe(false);
    expect(net.state.asked.map((a) => a.path)).toEqual(['/dataset/apikey=KEY']);
    // An older copy (another sha256 and ETag): the update downloads, naming the ETag it holds, and keeps the new one.
    kept.push({ text: '{"meta":{}}\n', etag: '"0123456789abcdef0123"', sha256: '0'.repeat(64) });
    net.state.asked.length = 0;
    const old = await createOfflineClient({ baseUrl: local.baseUrl, apiKey: local.key, fetch: net.fetch, store });
    await expect(old.person('Emil Jannings')).rejects.toMatchObject({ status: 404 });
    expect(await old.update()).toBe(true);
    expect(net.state.asked.at(-1)).toEqual({ path: '/dataset/file=oscars.ndjson/apikey=KEY', ifNoneMatch: '"0123456789abcdef0123"' });
    expect(kept.at(-1)!.sha256).toBe(kept[0].sha256);
    expect((await old.person('Emil Jannings')).length).toBeGreaterThan(0);
  });

  it('gives the service’s own 400 and 404 messages and forms, written out so that client.js imports nothing', () => {
    const { notFound, titleId, nameId, fileName, ...messages } = OFFLINE_ERRORS;
    expect(notFound).toEqual(Object.fromEntries(ROUTES.filter((r) => r.notFound && r.tag !== 'dataset').map((r) => [r.client, r.notFound])));
    expect(messages).toEqual({ badYear: MESSAGES.badYear, badName: MESSAGES.badName, badTitleId: MESSAGES.badTitleId, badNameId: MESSAGES.badNameId, badFileName: MESSAGES.badFileName });
    expect([titleId.source, nameId.source, fileName.source]).toEqual([ID_FORMS.titleById.pattern, ID_FORMS.nameById.pattern, DATASET_FILE_NAME.source]);
  });

  it('refuses a download whose bytes do not hash to the sha256 the list gives', async () => {
    const net = network();
    net.state.tamper = true;
    const error = await errorOf(createOfflineClient({ baseUrl: local.baseUrl, apiKey: local.key, fetch: net.fetch }));
    expect(error.message).toMatch(/does not match its sha256/);
  });

  it('ships without dependencies in under 50 KB of JavaScript, and loads', async () => {
    const out = await tempDir('client-size');
    await packClient(out);
    const dir = path.join(out, 'package');
    const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'));
    expect(pkg.dependencies).toBeUndefined();
    const js = (pkg.files as string[]).filter((f) => f.endsWith('.js'));
    let bytes = 0;
    for (const f of js) bytes += (await readFile(path.join(dir, f))).length;
    expect(bytes).toBeLessThan(50 * 1024); // unminified: minified is smaller still
    expect(await readFile(path.join(dir, 'client.js'), 'utf8')).not.toMatch(/^\s*import\s/m); // a browser loads it alone
    const loaded = await import(pathToFileURL(path.join(dir, 'client.js')).href);
    expect([typeof loaded.createClient, typeof loaded.createOfflineClient]).toEqual(['function', 'function']);
  }, 60_000);
});

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates, and nothing else', () => {
    expect(parseRetryAfter('2')).toBe(2);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6);
    expect(parseRetryAfter('soon')).toBeNull();
    expect(parseRetryAfter(null)).toBeNull();
  });
});
