/**
 * Compares two builds of the same source, each read by its own code, answer
 * for answer: status, ETag, Content-Encoding and bytes, for every encoding a
 * client may ask for (none, gzip, br) and the 304 to the ETag just sent. For
 * a change of the stored layout, whose answers must not change at all: run the
 * previous commit's build and code beside this one's.
 *
 *   npm run bench:compare -- OLD_CHECKOUT OLD_DIST NEW_DIST [--join-etags-may-change] [--brotli-may-change]
 *
 * Every lookup the old build indexes is asked: the whole archive, every year,
 * every full category name (across years and at each of its years), every
 * name of the person index (across years and at each of its years), every
 * IMDb id, and category texts that join several names: every letter and
 * every word of a category name (across years and at every held year), and
 * every text that is part of two names or more (across years, and at three
 * years). It reads the old build's manifest, whole archive and name and id
 * shards itself (formats 9 to 14: each a file named by its ref's first id). With `--join-etags-may-change` (a change of
 * how joins are stored), the answer to a text matching several names may
 * answer another ETag, the same for every encoding; its bytes may not change,
 * and each build must answer 304 to its own ETag. Those are counted apart.
 * With `--brotli-may-change` (the build's brotli settings changed), a brotli
 * reply may be other bytes under another ETag if they decode to the old
 * reply's decoded bytes, with the same status and headers otherwise, and
 * each build answers 304 to its own ETag; counted apart too. With
 * `--encoded-etags-may-change` (copies compressed by the Node server rather
 * than stored), a gzip or brotli reply may carry another ETag, its bytes,
 * status and other headers the same, and each build answers 304 to its own
 * ETag: counted apart. The new build is asked as the Node server asks it:
 * through its compression (adapters/_node/encoding.ts), whose ETags the
 * server's request reads back (`answerTags`); the old one likewise through
 * its own, or, before layout 17, with the core's `compression` option.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { brotliDecompressSync } from 'node:zlib';
import { commandLine, refuser } from '../lib/command-line.ts';
import { createApi } from '../src/api/handler.ts';
import { DiskData } from '../adapters/_node/disk-data.ts';
import { answerTags, Encoder } from '../adapters/_node/encoding.ts';
import { andThen } from '../src/shared/maybe.ts';

const USAGE = `usage: npm run bench:compare -- OLD_CHECKOUT OLD_DIST NEW_DIST [--join-etags-may-change] [--brotli-may-change] [--encoded-etags-may-change]

Compares two builds of the same source answer for answer (status, ETag,
encoding, bytes, and the 304 to the ETag sent), each read by its own code:
OLD_CHECKOUT's src/ over OLD_DIST, this checkout's over NEW_DIST. For a change
of the stored layout, which must change no answer.

Options:
  --join-etags-may-change   an answer to a text matching several category
                            names may change its ETag, not its bytes
  --brotli-may-change       a brotli reply may be other bytes (and ETag)
                            that decode to the same answer
  --encoded-etags-may-change  a gzip or brotli reply may carry another ETag,
                            not other bytes
  -h, --help                this text`;
const { values, positionals } = commandLine({
  name: 'bench:compare',
  usage: USAGE,
  options: {
    'join-etags-may-change': { type: 'boolean' },
    'brotli-may-change': { type: 'boolean' },
    'encoded-etags-may-change': { type: 'boolean' },
  },
  positionals: 3,
});
const [oldRoot, oldDist, newDist] = positionals;
const joinEtagsMayChange = values['join-etags-may-change'] === true;
const brotliMayChange = values['brotli-may-change'] === true;
const encodedEtagsMayChange = values['encoded-etags-may-change'] === true;
if (!oldRoot || !oldDist || !newDist) refuser('bench:compare')('name OLD_CHECKOUT OLD_DIST NEW_DIST; see --help', 2);

type Api = Pick<ReturnType<typeof createApi>, 'reply'>;
const options = { keys: { verify: () => true }, rateLimitPerMinute: 1e12, compression: true };
const newApi = createApi({ ...options, data: new DiskData(newDist, { revalidateMs: 60_000 }) });
interface Encoding {
  Encoder: typeof Encoder;
  answerTags: typeof answerTags;
}
/** A build as the Node server answers: If-None-Match read back to the answer's tags, the reply compressed as the client accepts. */
function served(api: Api, encoding: Encoding): Api {
  const encoder = new encoding.Encoder();
  return {
    reply: (request) => {
      const header = (name: string) =>
        name === 'if-none-match' ? encoding.answerTags(request.header(name) ?? undefined) : request.header(name);
      return andThen(api.reply({ ...request, header }), (reply) =>
        encoder.encode(reply, request.header('accept-encoding') ?? undefined),
      );
    },
  };
}
const oldHandler = (await import(pathToFileURL(path.resolve(oldRoot, 'src/api/handler.ts')).href)) as {
  createApi: typeof createApi;
};
const oldDisk = (await import(pathToFileURL(path.resolve(oldRoot, 'adapters/_node/disk-data.ts')).href)) as {
  DiskData: typeof DiskData;
};
// Since layout 17 the Node adapter compresses (adapters/_node/encoding.ts); before, the core did.
const oldEncodingFile = path.resolve(oldRoot, 'adapters/_node/encoding.ts');
const oldEncoding = existsSync(oldEncodingFile)
  ? ((await import(pathToFileURL(oldEncodingFile).href)) as Encoding)
  : null;
const oldApi = oldHandler.createApi({ ...options, data: new oldDisk.DiskData(oldDist, { revalidateMs: 60_000 }) });
const apis: [Api, Api] = [oldEncoding ? served(oldApi, oldEncoding) : oldApi, served(newApi, { Encoder, answerTags })];

const readOld = (id: string) =>
  JSON.parse(readFileSync(path.join(oldDist, '_data/r', id.slice(0, 2), id.slice(0, 20)), 'utf8'));
const manifest = JSON.parse(readFileSync(path.join(oldDist, '_data/manifest.json'), 'utf8'));
const enc = encodeURIComponent;
const paths: string[] = ['/archive'];
for (const year of Object.keys(manifest.years)) paths.push(`/archive/year=${year}`);
const words = new Set<string>('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ('.split(''));
const heldYears = Object.keys(manifest.years);
/**
 * Each full category name and the years it was used, from the old
 * build's whole archive (whatever its index files look like).
 */
const yearsOfName = new Map<string, Set<string>>();
for (const [year, categories] of Object.entries(readOld(manifest.archive) as Record<string, { category: string }[]>)) {
  for (const { category } of categories) yearsOfName.set(category, (yearsOfName.get(category) ?? new Set()).add(year));
}
/** Category paths whose text matches several full names: a join, whose ETag may change with --join-etags-may-change. */
const names = [...yearsOfName.keys()];
const joinPaths = new Set<string>();
const joinable = (text: string) => names.filter((n) => n.includes(text)).length >= 2;
for (const [name, years] of yearsOfName) {
  for (const p of [`/award/name=${enc(name)}`, ...[...years].map((y) => `/award/name=${enc(name)}/year=${y}`)]) {
    paths.push(p);
    if (joinable(name)) joinPaths.add(p);
  }
  for (const word of name.split(/[ ()]+/)) if (word) words.add(word);
}
for (const word of words) {
  for (const p of [`/award/name=${enc(word)}`, ...heldYears.map((y) => `/award/name=${enc(word)}/year=${y}`)]) {
    paths.push(p);
    if (joinable(word)) joinPaths.add(p);
  }
}
/**
 * Texts part of two full names or more: every join across years, and at
 * three years (a text part of fewer stays so however it is extended).
 */
const joinTexts = new Set<string>();
for (const name of names) {
  for (let start = 0; start < name.length; start++) {
    for (let end = start + 1; end <= name.length; end++) {
      const text = name.slice(start, end);
      if (!joinable(text)) break;
      joinTexts.add(text);
    }
  }
}
for (const text of joinTexts) {
  if (words.has(text)) continue;
  for (const p of [
    `/award/name=${enc(text)}`,
    ...['1930', '2000', '2026'].map((y) => `/award/name=${enc(text)}/year=${y}`),
  ]) {
    paths.push(p);
    joinPaths.add(p);
  }
}
for (const ref of manifest.shards as string[]) {
  for (const [name, [, years]] of Object.entries(readOld(ref) as Record<string, [string, Record<string, string>]>)) {
    paths.push(`/person/name=${enc(name)}`);
    for (const year of Object.keys(years)) paths.push(`/movie/name=${enc(name)}/year=${year}`);
  }
}
for (const ref of manifest.ids as string[]) {
  for (const id of Object.keys(readOld(ref))) paths.push(id.startsWith('tt') ? `/title/id=${id}` : `/name/id=${id}`);
}
paths.push(
  '/person/name=Nobody%20Atall',
  '/movie/name=Sinners/year=1999',
  '/title/id=tt0000000',
  '/name/id=nm0000000',
  '/award/name=Zzz',
);

/** What a reply is, for comparing: status, the headers that matter, the body's bytes as hex-free text. */
async function answer(api: Api, url: string, headers: Record<string, string>): Promise<string> {
  const reply = await api.reply({ method: 'GET', url, header: (n) => headers[n.toLowerCase()] ?? null });
  const h = reply.headers;
  const body = reply.body ? Buffer.from(reply.body).toString('base64') : '';
  return `${reply.status} etag=${h.etag} encoding=${h['content-encoding'] ?? '-'} vary=${h.vary ?? '-'} length=${h['content-length'] ?? '-'} ${body}`;
}

const ETAG = /etag=(\S+)/;
const LENGTH = /length=(\S+)/;
const counts = {
  paths: paths.length,
  requests: 0,
  differing: 0,
  joinEtagsChanged: 0,
  brotliRecompressed: 0,
  encodedEtagsChanged: 0,
  byStatus: {} as Record<string, number>,
};
/** Whether two replies differ in their ETag alone, both compressed. */
const encodedEtagOnly = (a: string, b: string) =>
  !a.includes(' encoding=- ') && a.replace(ETAG, '') === b.replace(ETAG, '');

/** Whether two brotli replies differ only in their bytes, ETag and length, their bytes decoding to the same answer. */
function sameDecodedBrotli(a: string, b: string): boolean {
  if (!a.includes(' encoding=br ') || !b.includes(' encoding=br ')) return false;
  const head = (reply: string) => reply.slice(0, reply.lastIndexOf(' ')).replace(ETAG, '').replace(LENGTH, '');
  const decoded = (reply: string) =>
    brotliDecompressSync(Buffer.from(reply.slice(reply.lastIndexOf(' ') + 1), 'base64'));
  return head(a) === head(b) && decoded(a).equals(decoded(b));
}
const differs = (what: string) => {
  counts.differing++;
  if (counts.differing <= 10) console.log(`DIFFERENT ${what}`);
};
for (const p of paths) {
  const url = `${p}/apikey=faa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`;
  const etagOfNew = new Set<string>();
  for (const accept of ['', 'gzip', 'br', 'gzip, br']) {
    const headers: Record<string, string> = accept ? { 'accept-encoding': accept } : {};
    const [a, b] = await Promise.all(apis.map((api) => answer(api, url, headers)));
    counts.requests += 2;
    const status = a.slice(0, 3);
    counts.byStatus[status] = (counts.byStatus[status] ?? 0) + 1;
    const [etagA, etagB] = [ETAG.exec(a)?.[1], ETAG.exec(b)?.[1]];
    const joinEtagOnly =
      joinEtagsMayChange && joinPaths.has(p) && etagA !== etagB && a.replace(ETAG, '') === b.replace(ETAG, '');
    const recompressed = brotliMayChange && a !== b && sameDecodedBrotli(a, b);
    const reEtagged = encodedEtagsMayChange && etagA !== etagB && encodedEtagOnly(a, b);
    const etagMayDiffer = joinEtagOnly || recompressed || reEtagged;
    if (recompressed) counts.brotliRecompressed++;
    else if (reEtagged) counts.encodedEtagsChanged++;
    else if (joinEtagOnly) {
      counts.joinEtagsChanged++;
      etagOfNew.add(etagB!);
      if (etagOfNew.size > 1) differs(`${p}: the new build's ETag differs by encoding asked`);
    } else if (a !== b) differs(`${p} (${accept || 'identity'}):\n  old ${a.slice(0, 200)}\n  new ${b.slice(0, 200)}`);
    if (status === '200' && etagA && etagB) {
      const [c, d] = await Promise.all([
        answer(apis[0], url, { ...headers, 'if-none-match': etagA }),
        answer(apis[1], url, { ...headers, 'if-none-match': etagB }),
      ]);
      counts.requests += 2;
      if (
        (etagMayDiffer ? c.replace(ETAG, '') !== d.replace(ETAG, '') : c !== d) ||
        !c.startsWith('304') ||
        !d.startsWith('304')
      ) {
        differs(`304 ${p} (${accept || 'identity'}): old ${c.slice(0, 120)} new ${d.slice(0, 120)}`);
      }
    }
  }
}
console.log(JSON.stringify(counts));
process.exitCode = counts.differing ? 1 : 0;
