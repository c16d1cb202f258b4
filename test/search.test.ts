/**
 * Search, held against the source rather than the build: names sampled from
 * oscars.csv with a fixed seed (read here as the data's README describes
 * the format, with none of the build's code), each searched lower-cased and
 * stripped of its marks, must come first, or tied only with names that read
 * the same once case, marks, punctuation and spacing are set aside; and every
 * result counts exactly what its path answers.
 */
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Api, createApi } from '../src/api/handler.ts';
import { DiskData } from '../src/server/disk-data.node.ts';
import { buildInto, SHARED_SOURCE } from './helpers.ts';

/** The served names of the source, as the spec's arrays hold them: each Film value, and each Nominees value (or Name, when there are none). */
function sourceNames(text: string): string[] {
  const names = new Set<string>();
  for (const line of text.split('\n').slice(1)) {
    if (line === '') continue;
    const fields = line.split('\t').map((f) => f.replaceAll('\\"', '"'));
    const [film = '', , name = '', nominees = ''] = [fields[5], fields[6], fields[7], fields[8]];
    const people = nominees ? nominees.split('|') : name ? [name] : [];
    for (const n of [...film.split('|'), ...people]) if (n !== '') names.add(n);
  }
  return [...names];
}

/** Lower case, without marks: what a user types who does not know the accents. */
const plain = (text: string) => text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
/** The same, with punctuation and spacing set aside too: names that read the same. */
const bare = (text: string) => plain(text).replace(/[^\p{L}\p{N}]/gu, '');

/** A seeded generator (mulberry32), so the sample is the same every run. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

interface Result {
  name: string;
  kind: string;
  nominations: number;
  wins: number;
  firstYear: string;
  lastYear: string;
  path: string;
}

let api: Api;
let names: string[];
const ask = async (path: string) => {
  const reply = await api.reply({ method: 'GET', url: `${path}/apikey=faa_tests`, header: () => null });
  return { status: reply.status, body: JSON.parse(new TextDecoder().decode(reply.body!)) };
};

beforeAll(async () => {
  const dist = await buildInto(SHARED_SOURCE, 'search');
  api = createApi({ data: new DiskData(dist), keys: { verify: () => true }, rateLimitPerMinute: 1e9 });
  names = sourceNames(await readFile(SHARED_SOURCE, 'utf8')).filter((n) => bare(n) !== '');
}, 180_000);

describe('search, against the source', () => {
  it('finds 300 names sampled from the source first, searched lower-cased and without marks, or tied only with names that read the same', async () => {
    const next = random(20261124);
    // Beside the sample, every name with three marks or more (Alejandro González Iñárritu): too many for a typo to stand in for them.
    const marked = names.filter((n) => (n.normalize('NFD').match(/\p{M}/gu) ?? []).length >= 3);
    expect(marked.length).toBeGreaterThanOrEqual(3);
    const sample = [...Array.from({ length: 300 }, () => names[Math.floor(next() * names.length)]), ...marked];
    const missed: string[] = [];
    for (const name of sample) {
      const { status, body } = await ask(`/search/name=${encodeURIComponent(plain(name))}`);
      expect(status).toBe(200);
      const results = body as Result[];
      const at = results.findIndex((r) => r.name === name);
      // Everything ranked above it reads the same as it does.
      if (at < 0 || results.slice(0, at).some((r) => bare(r.name) !== bare(name))) missed.push(`${name}: ${results.slice(0, 3).map((r) => r.name).join(', ')}`);
    }
    expect(missed).toEqual([]);
  });

  it('counts in every result of those searches exactly what its path answers', async () => {
    const next = random(20261125);
    for (let i = 0; i < 40; i++) {
      const name = names[Math.floor(next() * names.length)];
      const { body } = await ask(`/search/name=${encodeURIComponent(plain(name).slice(0, 6))}`);
      for (const result of body as Result[]) {
        const { status, body: answer } = await ask(result.path);
        expect([result.path, status]).toEqual([result.path, 200]);
        const matches = answer as { year: string; nomination?: { won: boolean }; nominations?: { won: boolean }[] }[];
        const nominations = matches.flatMap((m) => m.nominations ?? [m.nomination!]);
        const years = matches.map((m) => m.year).sort();
        expect({ path: result.path, n: result.nominations, w: result.wins, first: result.firstYear, last: result.lastYear }).toEqual({
          path: result.path,
          n: nominations.length,
          w: nominations.filter((n) => n.won).length,
          first: years[0],
          last: years[years.length - 1],
        });
      }
    }
  });

  it('classes a name by the IMDb id the source gives it, and one without by its column', async () => {
    const first = async (text: string) => ((await ask(`/search/name=${encodeURIComponent(text)}`)).body as Result[])[0];
    expect(await first('Meryl Streep')).toMatchObject({ name: 'Meryl Streep', kind: 'person' });
    expect(await first('Metro-Goldwyn-Mayer')).toMatchObject({ name: 'Metro-Goldwyn-Mayer', kind: 'company' });
    expect(await first('Oppenheimer')).toMatchObject({ name: 'Oppenheimer', kind: 'film' });
    // International Feature Film names the country in the Name column, with no id: a company.
    expect(await first('Norway')).toMatchObject({ name: 'Norway', kind: 'company' });
    expect(await first('Best Picture')).toMatchObject({ name: 'Best Picture', kind: 'category' });
  });

  it('puts the name exactly as asked before one that differs only in case, marks or punctuation', async () => {
    // Two served names that read the same: the one asked for exactly comes first, whichever has more nominations.
    const byBare = new Map<string, string[]>();
    for (const n of names) byBare.set(bare(n), [...(byBare.get(bare(n)) ?? []), n]);
    const pair = [...byBare.values()].find((group) => group.length === 2)!;
    for (const name of pair) expect(((await ask(`/search/name=${encodeURIComponent(name)}`)).body as Result[])[0].name).toBe(name);
  });
});
