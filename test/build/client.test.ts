import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageReadme, packClient } from '../../build/site/pack-client.ts';
import {
  ApiError,
  type Client,
  createClient,
  createOfflineClient,
  type HeldDataset,
  OFFLINE_ERRORS,
  parseRetryAfter,
  type ClientOptions,
} from '../../src/client/client.ts';
import { ROUTES } from '../../src/shared/routes.ts';
import { tempDir } from '../helpers/temp.ts';
import { MESSAGES } from '../../src/shared/messages.ts';
import type { DatasetList } from '../../src/shared/types.ts';
import { type LocalServer, startLocalServer } from '../helpers/servers.ts';

let local: LocalServer;
beforeAll(async () => {
  // The offline client's tests download the dataset many times over: more than the 60 a minute one key may ask.
  local = await startLocalServer({ rateLimitPerMinute: 10_000 });
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

const errorOf = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable('expected an ApiError'),
    (e: unknown) => e as ApiError,
  );

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
    expect(wings.map((m) => [m.year, m.category, m.nomination.primary])).toContainEqual([
      '1929',
      'Outstanding Picture',
      ['Wings'],
    ]);
    expect(wings).toEqual(await api.person('Wings')); // on the sample only one film has that title
    expect(await api.nameById('nm0417837')).toEqual(await api.person('Emil Jannings'));
    expect(await errorOf(api.titleById('tt0000000'))).toMatchObject({
      status: 404,
      message: 'Title not found',
      path: '/title/id=tt0000000/apikey=…',
    });
    expect(await errorOf(api.nameById('Emil Jannings'))).toMatchObject({
      status: 400,
      message: MESSAGES.badNameId,
      path: '/name/id=Emil%20Jannings/apikey=…',
    });
  });

  it('searches by approximate name and lists every category name, each result counting what its lookup answers', async () => {
    const { api } = client();
    const results = await api.search('emma st');
    // A person the source gives an IMDb id is answered by it.
    expect(results[0]).toMatchObject({
      name: 'Emma Stone',
      kind: 'person',
      id: 'nm1297015',
      path: '/name/id=nm1297015',
    });
    expect(results[0].nominations).toBe((await api.nameById(results[0].id!)).length);
    expect(await api.search('zzqxjvwk qqzzpx')).toEqual([]);
    expect(await errorOf(api.search(''))).toMatchObject({ status: 400, path: '/search/name=/apikey=…' });
    const list = await api.categories();
    const archive = await api.archive();
    expect(list.map((c) => c.name)).toEqual([
      ...new Set(Object.values(archive).flatMap((ceremony) => ceremony.map((c) => c.category))),
    ]);
    expect(list.find((c) => c.name === 'Outstanding Picture')).toMatchObject({
      firstYear: '1929',
      path: '/award/name=Outstanding%20Picture',
    });
  });

  it('encodes each parameter into its segment and sends the key only in apikey=', async () => {
    const recorder = recordingFetch();
    const { api } = client({ fetch: recorder.fetch });
    await errorOf(api.film('AC/DC & Friends', 1930));
    expect(recorder.calls[0].url).toBe(
      `${local.baseUrl}/movie/name=AC%2FDC%20%26%20Friends/year=1930/apikey=${local.key}`,
    );
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
    // The ETag the answer came with: its id, or the id of the copy the Node server compressed for this client.
    expect(recorder.calls[1].headers['if-none-match']).toMatch(/^"[0-9a-f]{20}(-gzip|-br)?"$/);
    expect(second).toEqual(first);
  });

  it('waits out a 429 for Retry-After seconds, then retries', async () => {
    const recorder = recordingFetch((call) =>
      call === 0
        ? Response.json(
            { error: MESSAGES.tooMany, limit: '60 requests per minute', retryAfter: 2 },
            { status: 429, headers: { 'retry-after': '2' } },
          )
        : null,
    );
    const { api, sleeps } = client({ fetch: recorder.fetch });
    const person = await api.person('Emil Jannings');
    expect(sleeps).toEqual([2000]);
    expect(recorder.calls.map((c) => c.status)).toEqual([429, 200]);
    expect(person.length).toBeGreaterThan(0);
  });

  it('throws the 429 when Retry-After is longer than it is willing to wait', async () => {
    const recorder = recordingFetch(() =>
      Response.json({ error: MESSAGES.tooMany }, { status: 429, headers: { 'retry-after': '600' } }),
    );
    const { api, sleeps } = client({ fetch: recorder.fetch });
    const error = await errorOf(api.archive());
    expect(error).toMatchObject({ status: 429, message: MESSAGES.tooMany, retryAfter: 600 });
    expect(sleeps).toEqual([]);
  });

  it('retries a 500 after backing off', async () => {
    const recorder = recordingFetch((call) =>
      call === 0 ? Response.json({ error: MESSAGES.fetchError }, { status: 500 }) : null,
    );
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
    expect(error).toMatchObject({
      status: 404,
      message: 'Person not found',
      path: '/person/name=Nobody%20At%20All/apikey=…',
    });
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
      state.asked.push({
        path: url.pathname.replace(local.key, 'KEY'),
        ifNoneMatch: new Headers(init?.headers).get('if-none-match'),
      });
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
    expect(net.state.asked.map((a) => a.path)).toEqual([
      '/dataset/apikey=KEY',
      '/dataset/file=oscars.ndjson/apikey=KEY',
      '/dataset/file=search.ndjson/apikey=KEY',
    ]);
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
      // Search from the service's own index: typos, short forms, categories, nothing close, no letter at all.
      ...['meryl strep', 'lotr', 'best picture', 'emma st', 'zzqxjvwk qqzzpx', '!!!', 'x'.repeat(200)].map(
        (text): [string, (c: Client) => Promise<unknown>] => [`search ${text.slice(0, 20)}`, (c) => c.search(text)],
      ),
    ];
    for (const [name, call] of calls)
      expect([name, JSON.stringify(await call(offline))]).toEqual([name, JSON.stringify(await call(online))]);
    const failing: [string, (c: Client) => Promise<unknown>][] = [
      ['person', (c) => c.person('Nobody Here')],
      ['ceremony', (c) => c.ceremony('abc')],
      ['ceremony', (c) => c.ceremony('01931')],
      ['film', (c) => c.film('Wings', 2026)],
      ['film', (c) => c.film('', 1929)],
      ['category', (c) => c.category('No Such Award')],
      ['categoryAt', (c) => c.categoryAt('Picture', '1.5')],
      ['titleById', (c) => c.titleById('nm1')],
      ['nameById', (c) => c.nameById('nm1')],
      ['search', (c) => c.search('')],
      ['search', (c) => c.search('é'.repeat(201))],
    ];
    for (const [name, call] of failing) {
      const [mine, theirs] = [await errorOf(call(offline)), await errorOf(call(online))];
      expect([name, mine.status, mine.message, mine.path]).toEqual([name, theirs.status, theirs.message, theirs.path]);
    }
    expect(net.state.asked).toHaveLength(3);
  });

  /** A file of the dataset (the NDJSON unless named) and its listed sha256 as someone fetches them with curl: plain requests, no client. */
  async function downloaded(name = 'oscars.ndjson') {
    const list = (await (await fetch(`${local.baseUrl}/dataset/apikey=${local.key}`)).json()) as DatasetList;
    const response = await fetch(`${local.baseUrl}/dataset/file=${name}/apikey=${local.key}`);
    return {
      text: await response.text(),
      etag: response.headers.get('etag'),
      sha256: list.files.find((f) => f.name === name)!.sha256,
    };
  }
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

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
    // An older copy, whole and true to its own sha256 (the 1929 ceremony alone):
    // the update downloads, naming the ETag it holds, and keeps the new one.
    const older =
      kept[0].text
        .split('\n')
        .filter((line) => line.includes('"held_year":1929,'))
        .join('\n') + '\n';
    kept.push({ ...kept[0], text: older, etag: '"0123456789abcdef0123"', sha256: sha256(older) });
    net.state.asked.length = 0;
    const old = await createOfflineClient({ baseUrl: local.baseUrl, apiKey: local.key, fetch: net.fetch, store });
    expect(net.state.asked).toEqual([]);
    await expect(old.ceremony(2026)).rejects.toMatchObject({ status: 404 });
    expect(await old.update()).toBe(true);
    expect(net.state.asked.at(-1)).toEqual({
      path: '/dataset/file=oscars.ndjson/apikey=KEY',
      ifNoneMatch: '"0123456789abcdef0123"',
    });
    expect(kept.at(-1)!.sha256).toBe(kept[0].sha256);
    expect(await old.ceremony(2026)).toEqual(
      await createClient({ baseUrl: local.baseUrl, apiKey: local.key }).ceremony(2026),
    );
  });

  it('hashes the copy a store holds: one edited, or cut short, with its sha256 left alone is downloaded again', async () => {
    const good = await downloaded();
    const lines = good.text.split('\n');
    // A win taken away from a film with an id, as an edit in a text editor would.
    const at = lines.findIndex((l) => l.includes('"won":true') && /"imdb_id":"tt/.test(l));
    const film = /"imdb_id":"(tt[0-9]+)"/.exec(lines[at])![1];
    const edited = lines.with(at, lines[at].replace('"won":true', '"won":false')).join('\n');
    const cut = lines.slice(0, lines.length >> 1).join('\n');
    const online = createClient({ baseUrl: local.baseUrl, apiKey: local.key });
    for (const [what, text] of [
      ['edited', edited],
      ['cut short', cut],
    ]) {
      const net = network();
      const kept: HeldDataset[] = [{ ...good, text }];
      const store = { read: () => kept.at(-1)!, write: (held: HeldDataset) => void kept.push(held) };
      const offline = await createOfflineClient({ baseUrl: local.baseUrl, apiKey: local.key, fetch: net.fetch, store });
      // Asked whole: the ETag it holds names bytes it no longer has.
      expect([what, net.state.asked]).toEqual([
        what,
        [
          { path: '/dataset/apikey=KEY', ifNoneMatch: null },
          { path: '/dataset/file=oscars.ndjson/apikey=KEY', ifNoneMatch: null },
          { path: '/dataset/file=search.ndjson/apikey=KEY', ifNoneMatch: null }, // never held
        ],
      ]);
      expect([what, kept.at(-1)!.text === good.text]).toEqual([what, true]);
      expect([what, JSON.stringify(await offline.titleById(film))]).toEqual([
        what,
        JSON.stringify(await online.titleById(film)),
      ]);
      // And on update(): the copy held is hashed again, not its sha256 field believed.
      kept.at(-1)!.text = edited;
      net.state.asked.length = 0;
      expect([what, await offline.update()]).toEqual([what, true]);
      expect([what, net.state.asked.at(-1)]).toEqual([
        what,
        { path: '/dataset/file=oscars.ndjson/apikey=KEY', ifNoneMatch: null },
      ]);
      expect([what, JSON.stringify(await offline.titleById(film))]).toEqual([
        what,
        JSON.stringify(await online.titleById(film)),
      ]);
    }
  });

  it('starts over a store that cannot be read (cut off mid-write, or throwing), and no error shows what it held', async () => {
    const dir = await tempDir('client-store');
    const file = path.join(dir, 'oscars-dataset.json');
    const good = await downloaded();
    const secret = 'a text the store held: never in an error';
    const unreadable: [string, () => unknown][] = [
      ['a file cut off mid-write', () => readFile(file, 'utf8').then(JSON.parse)],
      ['a read that throws', () => Promise.reject(new Error(secret))],
      ['a copy of another shape', () => ({ text: 42, etag: null, sha256: good.sha256 })],
    ];
    for (const [what, read] of unreadable) {
      await writeFile(file, JSON.stringify({ ...good, text: `${secret}\n${good.text}` }).slice(0, 5_000));
      const written: HeldDataset[] = [];
      const offline = await createOfflineClient({
        baseUrl: local.baseUrl,
        apiKey: local.key,
        store: { read: read as () => HeldDataset, write: (held) => void written.push(held) },
      });
      expect([what, written.map((h) => h.sha256)]).toEqual([what, [good.sha256]]);
      expect([what, (await offline.ceremony(1929)).length]).toEqual([
        what,
        (await createClient({ baseUrl: local.baseUrl, apiKey: local.key }).ceremony(1929)).length,
      ]);
    }
    // A dataset of another format (here the first, whose lines said
    // `year` and `imdb`) is refused, not read into wrong answers.
    const earlier = good.text.replaceAll('"held_year":', '"year":').replaceAll('"imdb_id":', '"imdb":');
    const refused = await errorOf(
      createOfflineClient({ baseUrl: local.baseUrl, apiKey: local.key, seed: { text: earlier } }),
    );
    expect(refused.message).toMatch(/^The seed is not the dataset/);
    // A copy that hashes right but is no dataset never reaches the caller as a parse error with its text.
    const notDataset = `${secret}\n`;
    const error = await errorOf(
      createOfflineClient({ baseUrl: local.baseUrl, apiKey: local.key, seed: { text: notDataset } }),
    );
    expect([error.status, error.message]).toEqual([0, expect.stringMatching(/^The seed is not the dataset/)]);
    expect(`${error.message} ${error.stack}`).not.toContain(secret);
  });

  it('keeps its copy in the README’s file store, written to a temporary file and renamed', async () => {
    const readme = packageReadme();
    expect(readme).toMatch(
      /await writeFile\(`\$\{file\}\.tmp`, JSON\.stringify\(held\)\);\n\s*await rename\(`\$\{file\}\.tmp`, file\);/,
    );
    // The README's store, as written there, in a folder of its own;
    // then the copy cut as a crash mid-write would leave the .tmp.
    const dir = await tempDir('client-readme-store');
    const file = path.join(dir, 'oscars-dataset.json');
    const store = {
      read: () => readFile(file, 'utf8').then(JSON.parse),
      write: async (held: HeldDataset) => {
        await writeFile(`${file}.tmp`, JSON.stringify(held));
        await rename(`${file}.tmp`, file);
      },
    };
    await createOfflineClient({ baseUrl: local.baseUrl, apiKey: local.key, store });
    const whole = await readFile(file, 'utf8');
    await writeFile(`${file}.tmp`, whole.slice(0, whole.length >> 1));
    const net = network();
    net.state.online = false;
    const again = await createOfflineClient({ baseUrl: local.baseUrl, apiKey: local.key, fetch: net.fetch, store });
    expect((await again.ceremony(1929)).length).toBeGreaterThan(0);
  });

  it('is seeded from the NDJSON file and the search index downloaded by hand, with the network cut, and keeps them', async () => {
    const good = await downloaded();
    const index = await downloaded('search.ndjson');
    const net = network();
    net.state.online = false;
    const kept: HeldDataset[] = [];
    const store = { read: () => kept.at(-1) ?? null, write: (held: HeldDataset) => void kept.push(held) };
    const offline = await createOfflineClient({
      baseUrl: local.baseUrl,
      apiKey: local.key,
      fetch: net.fetch,
      store,
      seed: {
        text: new TextEncoder().encode(good.text),
        sha256: good.sha256,
        search: { text: index.text, sha256: index.sha256 },
      },
    });
    expect(net.state.asked).toEqual([]);
    expect(kept.map((h) => [h.sha256, h.search?.sha256])).toEqual([[good.sha256, index.sha256]]);
    const online = createClient({ baseUrl: local.baseUrl, apiKey: local.key });
    expect(JSON.stringify(await offline.person('Emil Jannings'))).toBe(
      JSON.stringify(await online.person('Emil Jannings')),
    );
    expect(JSON.stringify(await offline.search('jannings'))).toBe(JSON.stringify(await online.search('jannings')));
    // A later start takes the store's copy, not the seed; a seed that is not the file its sha256 names is refused.
    const next = await createOfflineClient({
      baseUrl: local.baseUrl,
      apiKey: local.key,
      fetch: net.fetch,
      store,
      seed: { text: 'ignored' },
    });
    expect((await next.ceremony(2026)).length).toBeGreaterThan(0);
    const error = await errorOf(
      createOfflineClient({
        baseUrl: local.baseUrl,
        apiKey: local.key,
        fetch: net.fetch,
        seed: { text: good.text.slice(1), sha256: good.sha256 },
      }),
    );
    expect(error.message).toMatch(/does not match its sha256/);
    const badIndex = await errorOf(
      createOfflineClient({
        baseUrl: local.baseUrl,
        apiKey: local.key,
        fetch: net.fetch,
        seed: { text: good.text, search: { text: index.text, sha256: good.sha256 } },
      }),
    );
    expect(badIndex.message).toBe('The seed does not match its sha256: download search.ndjson again');
    const notIndex = await errorOf(
      createOfflineClient({
        baseUrl: local.baseUrl,
        apiKey: local.key,
        seed: { text: good.text, search: { text: good.text } },
      }),
    );
    expect(notIndex.message).toMatch(/^The seed's search index is not one/);
    // Seeded without the index: every lookup but search, which says what it needs, until update() takes the index.
    const plain = await createOfflineClient({
      baseUrl: local.baseUrl,
      apiKey: local.key,
      fetch: net.fetch,
      seed: { text: good.text },
    });
    expect((await plain.ceremony(1929)).length).toBeGreaterThan(0);
    expect(await errorOf(plain.search('jannings'))).toMatchObject({
      status: 0,
      message: 'search needs the search index, search.ndjson: seed it too, or update()',
      path: '/search/name=jannings/apikey=…',
    });
    // Back online, update() compares with the list: the seeded copy is the service's, nothing to take, but the missing index.
    net.state.online = true;
    expect(await offline.update()).toBe(false);
    net.state.asked.length = 0;
    expect(await plain.update()).toBe(true);
    expect(net.state.asked.map((a) => a.path)).toEqual([
      '/dataset/apikey=KEY',
      '/dataset/file=search.ndjson/apikey=KEY',
    ]);
    expect(JSON.stringify(await plain.search('jannings'))).toBe(JSON.stringify(await online.search('jannings')));
  });

  it('completes a copy kept without the search index (by a client before offline search) with the index alone', async () => {
    const good = await downloaded();
    const net = network();
    const kept: HeldDataset[] = [{ text: good.text, etag: good.etag, sha256: good.sha256 }];
    const store = { read: () => kept.at(-1)!, write: (held: HeldDataset) => void kept.push(held) };
    const offline = await createOfflineClient({ baseUrl: local.baseUrl, apiKey: local.key, fetch: net.fetch, store });
    expect(net.state.asked.map((a) => a.path)).toEqual([
      '/dataset/apikey=KEY',
      '/dataset/file=search.ndjson/apikey=KEY',
    ]);
    expect(kept.at(-1)).toMatchObject({
      text: good.text,
      search: { sha256: (await downloaded('search.ndjson')).sha256 },
    });
    net.state.online = false;
    const online = createClient({ baseUrl: local.baseUrl, apiKey: local.key });
    expect(JSON.stringify(await offline.search('oppenhiemer'))).toBe(
      JSON.stringify(await online.search('oppenhiemer')),
    );
  });

  it('reads the list again when a file does not match the sha256 of the list it kept, before giving up', async () => {
    // A list from before a new revision, kept for its max-age: its sha256 names another file than the one now served.
    let lists = 0;
    const stale: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!new URL(String(input)).pathname.startsWith('/dataset/apikey=') || lists++ > 0) return response;
      const list = (await response.json()) as DatasetList;
      for (const f of list.files) f.sha256 = sha256(f.sha256);
      return new Response(JSON.stringify(list), {
        status: 200,
        headers: { 'content-type': 'application/json', 'cache-control': 'private, max-age=86400' },
      });
    };
    const api = createClient({ baseUrl: local.baseUrl, apiKey: local.key, fetch: stale });
    const bytes = await api.datasetFile('nominations.csv');
    const listed = (
      (await (await fetch(`${local.baseUrl}/dataset/apikey=${local.key}`)).json()) as DatasetList
    ).files.find((f) => f.name === 'nominations.csv')!.sha256;
    expect([lists, createHash('sha256').update(bytes).digest('hex')]).toEqual([2, listed]);
  });

  it('gives the service’s own 404 messages, written out so that client.js carries no route table', () => {
    expect(OFFLINE_ERRORS.notFound).toEqual(
      Object.fromEntries(ROUTES.filter((r) => r.notFound && r.tag !== 'dataset').map((r) => [r.client, r.notFound])),
    );
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
    // a browser loads it alone
    expect(await readFile(path.join(dir, 'client.js'), 'utf8')).not.toMatch(/^\s*import\s/m);
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
