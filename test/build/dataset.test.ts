/**
 * The dataset (`/dataset`): built with the answers, served behind the key,
 * and true to the source. Every count here is checked against the source
 * read again in this file (split on tabs and `|`, nothing from build/), the
 * SQLite file is opened by the sqlite3 command-line tool, the CSV files are
 * read back with a parser written here, and a new revision is built over an
 * old one to show that the list and every file follow it.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { beforeAll, describe, expect, it } from 'vitest';
import { build } from '../../build/build.ts';
import { createApi, type Api } from '../../src/api/handler.ts';
import { DiskData } from '../../adapters/_node/disk-data.ts';
import type { DatasetList } from '../../src/shared/types.ts';
import { searchOver, storedOfDataset } from '../../src/shared/search.ts';
import { FULL_SOURCE, SAMPLE_SOURCE } from '../helpers/paths.ts';
import { sharedBuild, tempDir } from '../helpers/temp.ts';

const SQLITE3 = '/usr/bin/sqlite3';
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/**
 * The source as its README describes it: a header, then one
 * nomination a line of tab-separated fields, `\"` a plain quote.
 */
function sourceRows(file: string): Record<string, string>[] {
  const [header, ...lines] = readFileSync(file, 'utf8').replace(/\n$/, '').split('\n');
  const columns = header.split('\t');
  return lines.map((line) =>
    Object.fromEntries(line.split('\t').map((v, i) => [columns[i], v.replaceAll('\\"', '"')])),
  );
}
const has = (field: string | undefined, id: string) => (field ?? '').split('|').some((v) => v.split(',').includes(id));

/**
 * RFC 4180, read independently of the writer: quoted fields may hold
 * commas, quotes (doubled) and line breaks; records end in CRLF.
 */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (text[i] === '"' && text[i + 1] === '"') {
          field += '"';
          i += 2;
        } else if (text[i] === '"') break;
        else field += text[i++];
      }
      i++;
    } else if (text[i] === ',') {
      record.push(field);
      field = '';
      i++;
    } else if (text.startsWith('\r\n', i)) {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i += 2;
    } else if (text[i] === '\n' || text[i] === '\r') throw new Error(`bare line break at ${i}`);
    else field += text[i++];
  }
  if (field !== '' || record.length) throw new Error('the last record does not end in CRLF');
  return records;
}

/** The API over a built dist/, with one key that always works. */
function apiOver(dist: string): Api {
  return createApi({ data: new DiskData(dist), keys: { verify: () => true }, rateLimitPerMinute: 100_000 });
}
async function get(api: Api, url: string, headers: Record<string, string> = {}) {
  const reply = await api.reply({ method: 'GET', url: `${url}/apikey=k`, header: (n) => headers[n] ?? null });
  return { ...reply, bytes: reply.body ?? new Uint8Array(0) };
}
async function download(api: Api) {
  const list = JSON.parse(new TextDecoder().decode((await get(api, '/dataset')).bytes)) as DatasetList;
  const files = new Map<string, Uint8Array>();
  for (const f of list.files) files.set(f.name, (await get(api, `/dataset/file=${f.name}`)).bytes);
  return { list, files };
}

describe('the dataset of the full archive', () => {
  const source = sourceRows(FULL_SOURCE);
  let dir: string;
  let api: Api;
  let list: DatasetList;
  let files: Map<string, Uint8Array>;
  let db: string;
  const sql = (query: string) => execFileSync(SQLITE3, ['-batch', '-readonly', db, query], { encoding: 'utf8' }).trim();

  beforeAll(async () => {
    // Only read: the run's one build of the full archive (test/helpers/temp.ts).
    const dist = await sharedBuild(FULL_SOURCE);
    dir = await tempDir('dataset');
    api = apiOver(dist);
    ({ list, files } = await download(api));
    db = path.join(dir, 'oscars.sqlite');
    writeFileSync(db, files.get('oscars.sqlite')!);
  }, 240_000);

  it('lists every file with its size and sha256, and serves exactly those bytes', () => {
    expect(list.files.map((f) => f.name)).toEqual([
      'oscars.sqlite',
      'oscars.ndjson',
      ...[
        'ceremonies',
        'categories',
        'nominations',
        'films',
        'people',
        'nomination_films',
        'nomination_people',
        'meta',
      ].map((t) => `${t}.csv`),
      'search.ndjson',
    ]);
    const pinned = sha256(readFileSync(FULL_SOURCE));
    for (const f of list.files) {
      const bytes = files.get(f.name)!;
      expect([f.name, f.bytes, f.sha256, f.revision, f.licence]).toEqual([
        f.name,
        bytes.length,
        sha256(bytes),
        pinned,
        'BSD-2-Clause',
      ]);
      expect(bytes.length).toBeLessThan(25 * 1024 * 1024);
    }
    expect(list.files.reduce((n, f) => n + f.bytes, 0)).toBeLessThan(20_000_000);
  });

  it('has the service’s search index, which answers as /search does, and says what it is and whose', async () => {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(files.get('search.ndjson')!);
    const about = JSON.parse(text.slice(0, text.indexOf('\n')));
    expect([about.licence, about.attribution, about.source_sha256]).toEqual([
      'BSD-2-Clause',
      expect.stringContaining('David V. Lu'),
      sha256(readFileSync(FULL_SOURCE)),
    ]);
    const search = searchOver(storedOfDataset(text));
    for (const query of ['meryl strep', 'lotr', 'best actress', 'the godfather part 2', 'zzqxjvwk'])
      expect([query, JSON.stringify(search(query))]).toEqual([
        query,
        new TextDecoder().decode((await get(api, `/search/name=${encodeURIComponent(query)}`)).bytes),
      ]);
  });

  it('has a SQLite file that the sqlite3 tool opens and finds whole', () => {
    expect(sql('PRAGMA integrity_check;')).toBe('ok');
    expect(sql("SELECT value FROM meta WHERE key = 'licence';")).toBe('BSD-2-Clause');
    expect(sql("SELECT value FROM meta WHERE key = 'attribution';")).toMatch(/David V\. Lu.*DLu\/oscar_data/);
  });

  it('counts what the source counts: nominations, Titanic (tt0120338) and its wins, Meryl Streep (nm0000658)', () => {
    const titanic = source.filter((r) => has(r.FilmId, 'tt0120338'));
    const streep = source.filter((r) => has(r.NomineeIds, 'nm0000658'));
    // The figures the issue states, for the pinned revision; the queries below must equal the source's own counts.
    expect([source.length, titanic.length, titanic.filter((r) => r.Winner === 'True').length, streep.length]).toEqual([
      12137, 14, 11, 21,
    ]);
    expect(Number(sql('SELECT count(*) FROM nominations;'))).toBe(source.length);
    expect(
      sql(
        "SELECT count(*) || ' ' || sum(won) FROM nominations n JOIN nomination_films nf ON nf.nomination_id = n.id JOIN films f ON f.id = nf.film_id WHERE f.imdb_id = 'tt0120338';",
      ),
    ).toBe(`${titanic.length} ${titanic.filter((r) => r.Winner === 'True').length}`);
    expect(
      Number(
        sql(
          "SELECT count(DISTINCT np.nomination_id) FROM nomination_people np JOIN people p ON p.id = np.person_id WHERE p.imdb_id = 'nm0000658';",
        ),
      ),
    ).toBe(streep.length);
    // Every character or song (Detail) the source gives a Titanic nominee,
    // as the README's query finds it: one per nominee, or one for all.
    const characters = titanic
      .filter((r) => r.Detail)
      .flatMap((r) => {
        const [ids, details] = [r.NomineeIds.split('|'), r.Detail.split('|')];
        return ids.map((id, i) => `${id}|${details.length === ids.length ? details[i] : r.Detail}`);
      })
      .sort();
    const found = sql(
      "SELECT p.imdb_id || '|' || np.detail FROM nomination_films nf JOIN films f ON f.id = nf.film_id JOIN nomination_people np ON np.nomination_id = nf.nomination_id JOIN people p ON p.id = np.person_id WHERE f.imdb_id = 'tt0120338' AND np.detail IS NOT NULL;",
    );
    expect(found.split('\n').sort()).toEqual(characters);
    expect(
      sql("SELECT p.name FROM people_fts JOIN people p ON p.id = people_fts.rowid WHERE people_fts MATCH 'streep';"),
    ).toBe('Meryl Streep');
  });

  it('has one row per thing: no title or name without an id where exactly one id is credited under it', () => {
    const credited = (texts: string, ids: string) => {
      const idsAt = ids.split('|');
      return texts
        .split('|')
        .map((text, i): [string, string[]] => [
          text,
          (idsAt[i] ?? '').split(',').filter((id) => id !== '' && id !== '?'),
        ]);
    };
    const idsOf = (pairs: [string, string[]][]) => {
      const map = new Map<string, Set<string>>();
      for (const [text, ids] of pairs) for (const id of ids) map.set(text, (map.get(text) ?? new Set()).add(id));
      return map;
    };
    const titleIds = idsOf(source.filter((r) => r.Film).flatMap((r) => credited(r.Film, r.FilmId ?? '')));
    const nameIds = idsOf(source.filter((r) => r.Nominees).flatMap((r) => credited(r.Nominees, r.NomineeIds ?? '')));
    const database = new DatabaseSync(db, { readOnly: true });
    const bare = (table: string, column: string) =>
      (
        database
          .prepare(
            `SELECT ${column} AS text FROM ${table} WHERE imdb_id IS NULL${table === 'people' ? " AND kind != 'country'" : ''}`,
          )
          .all() as { text: string }[]
      ).map((r) => r.text);
    expect(bare('films', 'title').filter((title) => titleIds.get(title)?.size === 1)).toEqual([]);
    expect(bare('people', 'name').filter((name) => nameIds.get(name)?.size === 1)).toEqual([]);
    // The issue's example: Metro-Goldwyn-Mayer, credited once without its id (1954's Scientific or Technical Award), is one row.
    expect(database.prepare("SELECT imdb_id FROM people WHERE name = 'Metro-Goldwyn-Mayer'").all()).toEqual([
      { imdb_id: 'co0007143' },
    ]);
    database.close();
  });

  it('has CSV files that parse back into the rows of the SQLite tables', () => {
    const database = new DatabaseSync(db, { readOnly: true });
    for (const f of list.files.filter((f) => f.format === 'csv')) {
      const table = f.name.replace(/\.csv$/, '');
      const [header, ...rows] = parseCsv(new TextDecoder('utf-8', { fatal: true }).decode(files.get(f.name)!));
      const stored = database.prepare(`SELECT * FROM ${table}`).all() as Record<string, unknown>[];
      expect([table, header]).toEqual([table, Object.keys(stored[0])]);
      expect([table, rows]).toEqual([
        table,
        stored.map((row) => Object.values(row).map((v) => (v === null ? '' : String(v)))),
      ]);
    }
    database.close();
  });

  it('has an NDJSON file of one nomination a line and nothing else, each field named as the SQLite column it holds', () => {
    const lines = new TextDecoder().decode(files.get('oscars.ndjson')!).split('\n');
    expect(lines.pop()).toBe('');
    // What a tool that reads NDJSON counts (wc -l, jq -s length,
    // DuckDB): the source's nominations, every line one shape.
    expect(lines.length).toBe(source.length);
    const nominations = lines.map((l) => JSON.parse(l));
    expect(nominations.map((n) => n.id)).toEqual(source.map((_, i) => i + 1));
    const database = new DatabaseSync(db, { readOnly: true });
    const rowsOf = (table: string) => database.prepare(`SELECT * FROM ${table}`).all() as Record<string, unknown>[];
    const columns = (table: string) => Object.keys(rowsOf(table)[0]);
    const byId = (table: string) => new Map(rowsOf(table).map((r) => [r.id, r]));
    const [categories, films, people] = [byId('categories'), byId('films'), byId('people')];
    const nominationRows = byId('nominations');
    // A field the source leaves empty is left out; every other is
    // the column of the same name, in the table it comes from.
    const present = (row: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(row).filter(([, v]) => v !== null));
    type Link = Record<string, string & number>;
    const links = (table: string) => {
      const map = new Map<unknown, Link[]>();
      for (const link of rowsOf(table) as Link[])
        map.set(link.nomination_id, [...(map.get(link.nomination_id) ?? []), link]);
      return map;
    };
    const [filmLinks, personLinks] = [links('nomination_films'), links('nomination_people')];
    for (const n of nominations) {
      const { category_id, won, ...row } = present(nominationRows.get(n.id)!);
      expect(n).toEqual({
        ...row,
        won: won === 1,
        category: categories.get(category_id),
        films: (filmLinks.get(n.id) ?? []).map(({ film_id, title, role, detail }) =>
          present({ id: film_id, imdb_id: films.get(film_id)!.imdb_id, title, role, detail }),
        ),
        people: (personLinks.get(n.id) ?? []).map(({ person_id, name, role, detail }) =>
          present({
            id: person_id,
            imdb_id: people.get(person_id)!.imdb_id,
            name,
            kind: people.get(person_id)!.kind,
            role,
            detail,
          }),
        ),
      });
    }
    // The names, once more against the tables' columns: the nominations
    // table's (category_id nested as its row), the links' and the things'.
    const names = (values: Record<string, unknown>[]) => [...new Set(values.flatMap((v) => Object.keys(v)))].sort();
    expect(names(nominations)).toEqual(
      [...columns('nominations').filter((c) => c !== 'category_id'), 'category', 'films', 'people'].sort(),
    );
    expect(names(nominations.map((n) => n.category))).toEqual(columns('categories').sort());
    expect(names(nominations.flatMap((n) => n.films))).toEqual(['id', 'imdb_id', 'title', 'role', 'detail'].sort());
    expect(names(nominations.flatMap((n) => n.people))).toEqual(
      ['id', 'imdb_id', 'name', 'kind', 'role', 'detail'].sort(),
    );
    database.close();
    // Counted from the source read here: Titanic (tt0120338), its nominations and wins.
    const titanic = nominations.filter((n) => n.films.some((f: { imdb_id?: string }) => f.imdb_id === 'tt0120338'));
    expect([titanic.length, titanic.filter((n) => n.won).length]).toEqual([
      source.filter((r) => has(r.FilmId, 'tt0120338')).length,
      source.filter((r) => has(r.FilmId, 'tt0120338') && r.Winner === 'True').length,
    ]);
  });

  it('keeps the revision and licence beside the nominations: in the list, meta.csv and the SQLite meta table', () => {
    const meta = new Map(
      parseCsv(new TextDecoder().decode(files.get('meta.csv')!))
        .slice(1)
        .map(([k, v]) => [k, v]),
    );
    expect([
      meta.get('source_sha256'),
      meta.get('licence'),
      sql("SELECT value FROM meta WHERE key = 'source_sha256';"),
    ]).toEqual([list.revision, list.licence, list.revision]);
  });

  it('serves a file as stored with its ETag, a 304, a Range as 206 and a range past the end as 416, whatever encoding is asked for', async () => {
    const bytes = files.get('nominations.csv')!;
    const whole = await get(api, '/dataset/file=nominations.csv');
    expect([whole.status, whole.headers['content-type'], whole.headers['accept-ranges']]).toEqual([
      200,
      'text/csv; charset=utf-8; header=present',
      'bytes',
    ]);
    expect((await get(api, '/dataset/file=nominations.csv', { 'if-none-match': whole.headers.etag })).status).toBe(304);
    // One form in dist/: no compressed copy of megabytes for the Node server alone (the CDN in front compresses).
    const asked = await get(api, '/dataset/file=nominations.csv', { 'accept-encoding': 'gzip, br' });
    expect([
      asked.headers['content-encoding'],
      asked.headers.etag,
      Buffer.from(asked.bytes).equals(Buffer.from(bytes)),
    ]).toEqual([undefined, whole.headers.etag, true]);
    const part = await get(api, '/dataset/file=nominations.csv', {
      range: 'bytes=1000-',
      'accept-encoding': 'gzip, br',
    });
    expect([
      part.status,
      part.headers['content-range'],
      part.headers['content-encoding'],
      Buffer.from(part.bytes).equals(Buffer.from(bytes.subarray(1000))),
    ]).toEqual([206, `bytes 1000-${bytes.length - 1}/${bytes.length}`, undefined, true]);
    const stale = await get(api, '/dataset/file=nominations.csv', { range: 'bytes=1000-', 'if-range': '"0000"' });
    expect([stale.status, stale.bytes.length]).toEqual([200, bytes.length]);
    const past = await get(api, '/dataset/file=nominations.csv', { range: `bytes=${bytes.length}-` });
    expect([past.status, past.headers['content-range']]).toEqual([416, `bytes */${bytes.length}`]);
  });

  it('answers 404 for a file the list does not name and 400 for a name no file can have', async () => {
    const missing = await get(api, '/dataset/file=nope.csv');
    expect([missing.status, JSON.parse(new TextDecoder().decode(missing.bytes))]).toEqual([
      404,
      { error: 'Dataset file not found' },
    ]);
    for (const name of [
      '..%2Fmanifest.json',
      'oscars.SQLITE',
      'oscars',
      '%2E%2E',
      'a.csv%00',
      'x'.repeat(70) + '.csv',
    ]) {
      const bad = await get(api, `/dataset/file=${name}`);
      expect([name, bad.status, JSON.parse(new TextDecoder().decode(bad.bytes)).error]).toEqual([
        name,
        400,
        expect.stringMatching(/^Invalid file/),
      ]);
    }
  });
});

describe('a new revision', () => {
  it('changes every file and the list, built over the old one, and is the same bytes when built again', async () => {
    const dir = await tempDir('dataset-revision');
    const out = path.join(dir, 'dist');
    const summary = path.join(dir, 'summary.json');
    const next = path.join(dir, 'next.tsv');
    // A ceremony added, with a category, a film and a person the sample does not have: what a yearly update brings.
    writeFileSync(
      next,
      `${readFileSync(SAMPLE_SOURCE, 'utf8')}99\t2026\tActing\tACTOR IN A LEADING ROLE\tACTOR IN A NEW ROLE\tA New Film\ttt99999991\tA. Newcomer\tA. Newcomer\tnm99999991\tTrue\tThe Lead\n`,
    );
    const options = { out, summary, log: () => {}, acceptChanges: true };
    await build({ ...options, source: SAMPLE_SOURCE });
    const before = await download(apiOver(out));
    await build({ ...options, source: next });
    const after = await download(apiOver(out));
    expect(after.list.revision).toBe(sha256(readFileSync(next)));
    expect(after.list.files.map((f) => f.name)).toEqual(before.list.files.map((f) => f.name));
    for (const f of after.list.files) {
      const old = before.list.files.find((o) => o.name === f.name)!;
      expect([f.name, f.sha256 === old.sha256, f.revision, sha256(after.files.get(f.name)!)]).toEqual([
        f.name,
        false,
        after.list.revision,
        f.sha256,
      ]);
    }
    await build({ ...options, source: next, out: path.join(dir, 'again') });
    const again = await download(apiOver(path.join(dir, 'again')));
    expect(again.list).toEqual(after.list);
  }, 120_000);
});
