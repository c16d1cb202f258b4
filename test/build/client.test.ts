import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, createClient, parseRetryAfter, type ClientOptions } from '../../src/client/client.ts';
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

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates, and nothing else', () => {
    expect(parseRetryAfter('2')).toBe(2);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6);
    expect(parseRetryAfter('soon')).toBeNull();
    expect(parseRetryAfter(null)).toBeNull();
  });
});
