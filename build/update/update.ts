/**
 * npm run data:update: the yearly update in one command. Finds the newest
 * revision of oscars.csv upstream through GitHub's REST API (or takes
 * --from URL|PATH), downloads it with a timeout, checks it parses with the
 * build's own importer, compares it with the pinned revision nomination by
 * nomination and prints the change report. A revision that would lose a
 * ceremony, a nomination or a win is refused (exit 1, nothing written)
 * unless --accept-changes; a new ceremony without winners only with
 * --nominations-only. Accepting pins it: data/source.json, the cache, the
 * committed archive summary (so the build's guard accepts it with no flag)
 * and an entry under "Data" in CHANGELOG.md. Errors are one line, exit 2.
 */
import path from 'node:path';
import fs from 'fs-extra';
import { commandLine } from '../../lib/command-line.ts';
import { writeWhole } from '../../lib/write-whole.ts';
import {
  fetchBounded,
  MAX_API_ANSWER_BYTES,
  MAX_SOURCE_BYTES_BOUND,
  maxSourceBytes,
  ReadLimitError,
  readFileBounded,
  SOURCE_LIMIT_ADVICE,
} from '../archive/bounded.ts';
import { appendToChangelog } from './changelog.ts';
import { compareRevisions } from './changes.ts';
import { formatSummary, summarize } from '../archive/guard.ts';
import { importArchive, ImportError } from '../archive/import.ts';
import { formatReport, lossSentence, type RevisionInfo } from './report.ts';
import { ROOT, sha256 } from '../archive/source.ts';
import type { Archive } from '../../src/shared/types.ts';

/** The file upstream, in DLu/oscar_data. */
export const SOURCE_PATH = 'oscars.csv';
export const DEFAULT_TIMEOUT_MS = 60_000;
/** Where the pin lives in a checkout. */
export const PIN_PATH = 'data/source.json';
export const SUMMARY_PATH = 'data/archive-summary.json';

/** data/source.json. */
export interface Pin {
  description: string;
  repository: string;
  commit: string | null;
  url: string | null;
  sha256: string;
  bytes: number;
  /** The commit's date, or the day it was pinned when the commit is unknown. */
  date?: string | null;
  /** When data:update pinned it. */
  pinnedAt?: string;
  cacheFile: string;
}

export interface UpdateOptions {
  /** A URL or a file to take instead of asking GitHub for the newest revision. */
  from?: string;
  /** The upstream commit `from` is, when known (then the pin's URL is GitHub's raw URL of it). */
  commit?: string;
  acceptChanges?: boolean;
  nominationsOnly?: boolean;
  /** The checkout whose data/ and CHANGELOG.md are updated; default this one. */
  root?: string;
  /** Default CHANGELOG.md in `root`. */
  changelog?: string;
  /** Also write the report here when a revision is pinned (the workflow's pull request body). */
  report?: string;
  timeoutMs?: number;
  /** Most bytes a revision may have (default DATA_MAX_BYTES, else 20 MB). */
  maxBytes?: number;
  env?: NodeJS.ProcessEnv;
  fetch?: typeof fetch;
  log?: (line: string) => void;
  /** Where the refusal goes (stderr by default). */
  warn?: (line: string) => void;
  now?: () => Date;
}

export interface UpdateResult {
  status: 'current' | 'refused' | 'pinned';
  report: string | null;
  exitCode: 0 | 1;
}

/** A failure of the update itself (network, a file that does not parse): exit 2, nothing written. */
export class UpdateError extends Error {}

/** One revision as downloaded or read. */
interface Fetched extends Omit<RevisionInfo, 'sha256' | 'bytes'> {
  bytes: Buffer;
  url: string | null;
}

interface Context {
  fetch: typeof fetch;
  timeoutMs: number;
  maxBytes: number;
  env: NodeJS.ProcessEnv;
}

/** Why a download failed, in a few words. */
function failure(error: unknown, c: Context): string {
  const e = error as Error & { cause?: { code?: string; message?: string } };
  return e.name === 'TimeoutError'
    ? `no whole answer within ${c.timeoutMs / 1000} s`
    : (e.cause?.code ?? e.cause?.message ?? e.message);
}

/**
 * GET `url` within the time and size limits (headers and body alike), as bytes; an UpdateError naming `what` otherwise.
 */
async function download(
  c: Context,
  url: string,
  what: string,
  headers: Record<string, string> = {},
  maxBytes = c.maxBytes,
): Promise<Buffer> {
  // A revision's limit is DATA_MAX_BYTES or --max-bytes; the API answer's is fixed, and no setting raises it.
  const advice = maxBytes === c.maxBytes ? `${SOURCE_LIMIT_ADVICE} (or pass --max-bytes)` : null;
  try {
    return await fetchBounded(c.fetch, url, `${what} at ${url}`, { headers, timeoutMs: c.timeoutMs, maxBytes, advice });
  } catch (error) {
    if (error instanceof ReadLimitError) throw new UpdateError(error.message);
    throw new UpdateError(
      `cannot download ${what} from ${url} (${failure(error, c)}); nothing written. Check the network (and GITHUB_TOKEN, for GitHub's rate limit) and run again, or pass --from PATH`,
    );
  }
}

function githubHeaders(env: NodeJS.ProcessEnv, accept: string): Record<string, string> {
  return {
    accept,
    'x-github-api-version': '2022-11-28',
    'user-agent': 'film-awards-archive-api data:update',
    ...(env.GITHUB_TOKEN ? { authorization: `Bearer ${env.GITHUB_TOKEN}` } : {}),
  };
}

const rawUrl = (repository: string, commit: string) =>
  `https://raw.githubusercontent.com/${repository}/${commit}/${SOURCE_PATH}`;

/**
 * The newest commit touching oscars.csv upstream, and its file,
 * through GitHub's REST API (GITHUB_API_URL, as Actions sets it).
 */
async function newestRevision(c: Context, repository: string, pinned: string | null): Promise<Fetched | null> {
  const api = (c.env.GITHUB_API_URL || 'https://api.github.com').replace(/\/+$/, '');
  const listed = `${api}/repos/${repository}/commits?path=${SOURCE_PATH}&per_page=1`;
  const body = await download(
    c,
    listed,
    `the newest revision of ${SOURCE_PATH}`,
    githubHeaders(c.env, 'application/vnd.github+json'),
    MAX_API_ANSWER_BYTES,
  );
  let newest: { sha?: unknown; commit?: { committer?: { date?: unknown } } } | undefined;
  try {
    newest = JSON.parse(body.toString('utf8'))[0];
  } catch {
    newest = undefined;
  }
  if (typeof newest?.sha !== 'string' || !/^[0-9a-f]{40}$/.test(newest.sha)) {
    throw new UpdateError(
      `GitHub's answer from ${listed} names no commit of ${SOURCE_PATH}; nothing written. Run again later, or pass --from URL|PATH`,
    );
  }
  if (newest.sha === pinned) return null;
  // The date goes into the report and the pin: only a timestamp
  // as GitHub writes them, never other text from the answer.
  const stamp = newest.commit?.committer?.date;
  const date =
    typeof stamp === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(stamp)
      ? stamp
      : null;
  const file = `${api}/repos/${repository}/contents/${SOURCE_PATH}?ref=${newest.sha}`;
  const bytes = await download(
    c,
    file,
    `${SOURCE_PATH} at ${newest.sha.slice(0, 12)}`,
    githubHeaders(c.env, 'application/vnd.github.raw+json'),
  );
  return {
    bytes,
    commit: newest.sha,
    date,
    dated: 'commit',
    from: rawUrl(repository, newest.sha),
    url: rawUrl(repository, newest.sha),
  };
}

/** --from: a URL downloaded, or a file read; its commit only when --commit says so. */
async function given(
  c: Context,
  from: string,
  commit: string | undefined,
  repository: string,
  today: string,
): Promise<Fetched> {
  if (commit !== undefined && !/^[0-9a-f]{40}$/.test(commit))
    throw new UpdateError(`--commit must be a full 40-digit commit hash, found ${JSON.stringify(commit)}`);
  const known = { commit: commit ?? null, date: today, dated: 'pinned' as const };
  if (/^https?:\/\//i.test(from))
    return { ...known, bytes: await download(c, from, 'the new revision'), from, url: from };
  const file = path.resolve(from);
  const bytes = await readFileBounded(
    file,
    `--from ${file}`,
    c.maxBytes,
    c.timeoutMs,
    `${SOURCE_LIMIT_ADVICE} (or pass --max-bytes)`,
  ).catch((error: NodeJS.ErrnoException) => {
    throw new UpdateError(
      error instanceof ReadLimitError
        ? error.message
        : `--from ${file} cannot be read (${error.code ?? error.message}); nothing written`,
    );
  });
  return { ...known, bytes, from: path.basename(file), url: commit ? rawUrl(repository, commit) : null };
}

/**
 * Rows a revision repeats exactly, as `line N repeats line M`: a
 * nomination listed twice is a mistake upstream, never two nominations.
 */
export function repeatedRows(text: string): string[] {
  const first = new Map<string, number>();
  const repeats: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (i === 0 || line.trim() === '') return;
    const seen = first.get(line);
    if (seen === undefined) first.set(line, i + 1);
    else repeats.push(`line ${i + 1} repeats line ${seen}`);
  });
  return repeats;
}

/**
 * The text of a revision, read by the build's importer; an
 * UpdateError naming the line otherwise, or the rows it repeats.
 */
function parse(bytes: Uint8Array, what: string): Archive {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UpdateError(
      `${what} is not UTF-8 text; nothing written. Check that it is oscars.csv, not a web page or an archive`,
    );
  }
  const repeats = repeatedRows(text);
  if (repeats.length) {
    const shown = repeats.slice(0, 3).join(', ') + (repeats.length > 3 ? `, … (${repeats.length} in all)` : '');
    throw new UpdateError(
      `${what} repeats rows exactly: ${shown}; nothing written. A nomination listed twice is a mistake upstream: wait for a corrected revision, or pass --from a corrected file`,
    );
  }
  try {
    return importArchive(text).archive;
  } catch (error) {
    if (!(error instanceof ImportError)) throw error;
    throw new UpdateError(
      `${what} does not parse (${error.message}); nothing written. Wait for a corrected revision upstream, or pass --from a corrected file`,
    );
  }
}

/**
 * The pinned revision's bytes, which the new one is compared with:
 * ARCHIVE_SOURCE or the cache when their sha256 is the pin's, else the pinned
 * URL. When none can be had, the one line says exactly that and how to get it.
 */
async function pinnedBytes(c: Context, root: string, pin: Pin): Promise<Buffer> {
  for (const candidate of [c.env.ARCHIVE_SOURCE, path.join(root, pin.cacheFile)]) {
    if (!candidate) continue;
    const bytes = await readFileBounded(path.resolve(candidate), candidate, c.maxBytes, c.timeoutMs).catch(() => null);
    if (bytes && sha256(bytes) === pin.sha256) return bytes;
  }
  const lacking = `the pinned revision (${pin.commit ? `commit ${pin.commit.slice(0, 12)}` : 'pinned from a file'}, sha256 ${pin.sha256.slice(0, 12)}), which the new one is compared with, is not in ${pin.cacheFile}`;
  const remedy = `run npm run data:fetch (online) to put it there, or set ARCHIVE_SOURCE=/path/to/the pinned oscars.csv, and run again; nothing written`;
  if (!pin.url)
    throw new UpdateError(
      `${lacking} and has no URL: set ARCHIVE_SOURCE=/path/to/the pinned oscars.csv and run again; nothing written`,
    );
  let bytes: Buffer;
  try {
    bytes = await fetchBounded(c.fetch, pin.url, 'the pinned revision', {
      timeoutMs: c.timeoutMs,
      maxBytes: c.maxBytes,
    });
  } catch (error) {
    throw new UpdateError(`${lacking} and cannot be downloaded from ${pin.url} (${failure(error, c)}): ${remedy}`);
  }
  if (sha256(bytes) !== pin.sha256)
    throw new UpdateError(
      `${pin.url} no longer has the pinned sha256 ${pin.sha256}; set ARCHIVE_SOURCE=/path/to/the pinned oscars.csv and run again`,
    );
  return bytes;
}

interface Accepted {
  root: string;
  pin: Pin;
  next: Fetched;
  archive: Archive;
  report: string;
  changelog: string;
  reportFile?: string;
  now: Date;
}

/** Pins the new revision: the cache, the summary the build's guard compares with, data/source.json, CHANGELOG.md. */
async function accept(a: Accepted): Promise<void> {
  const pin: Pin = {
    ...a.pin,
    commit: a.next.commit,
    url: a.next.url,
    sha256: sha256(a.next.bytes),
    bytes: a.next.bytes.length,
    date: a.next.date,
    pinnedAt: a.now.toISOString(),
  };
  await writeWhole(path.join(a.root, pin.cacheFile), a.next.bytes);
  await writeWhole(path.join(a.root, SUMMARY_PATH), formatSummary(summarize(a.archive)));
  await writeWhole(path.join(a.root, PIN_PATH), `${JSON.stringify(pin, null, 2)}\n`);
  const title = `${a.now.toISOString().slice(0, 10)}: oscars.csv ${pin.commit ? `at ${pin.commit.slice(0, 12)}` : `sha256 ${pin.sha256.slice(0, 12)}`}`;
  await appendToChangelog(a.changelog, title, a.report);
  if (a.reportFile) await writeWhole(path.resolve(a.reportFile), a.report);
}

/**
 * Why the new revision is refused, or null: losses without
 * --accept-changes, a ceremony without winners without --nominations-only.
 */
function refusal(changes: ReturnType<typeof compareRevisions>, o: UpdateOptions): string | null {
  if (changes.losses.length && !o.acceptChanges) {
    return `refused: this revision loses data the pinned one has (${lossSentence(changes)}); nothing written. If that is right, run again with --accept-changes`;
  }
  if (changes.nominationsOnly.length && !o.nominationsOnly) {
    return `refused: ${changes.nominationsOnly.join(', ')} has nominations but no winners yet; nothing written. Run again after the ceremony, or with --nominations-only to publish the nominations now`;
  }
  return null;
}

export async function update(o: UpdateOptions = {}): Promise<UpdateResult> {
  const log = o.log ?? ((line: string) => console.log(line));
  const root = path.resolve(o.root ?? ROOT);
  const now = (o.now ?? (() => new Date()))();
  const env = o.env ?? process.env;
  let maxBytes = o.maxBytes;
  try {
    maxBytes ??= maxSourceBytes(env);
  } catch (error) {
    throw new UpdateError((error as Error).message);
  }
  const c: Context = { fetch: o.fetch ?? fetch, timeoutMs: o.timeoutMs ?? DEFAULT_TIMEOUT_MS, maxBytes, env };
  const pin: Pin = await fs.readJson(path.join(root, PIN_PATH));
  const next = o.from
    ? await given(c, o.from, o.commit, pin.repository, now.toISOString())
    : await newestRevision(c, pin.repository, pin.commit);
  if (!next || sha256(next.bytes) === pin.sha256) {
    log(
      `data:update: the pinned revision (${pin.commit?.slice(0, 12) ?? pin.sha256.slice(0, 12)}) is the newest; nothing to do`,
    );
    return { status: 'current', report: null, exitCode: 0 };
  }
  const archive = parse(next.bytes, `the new revision (${next.from})`);
  const pinned = parse(await pinnedBytes(c, root, pin), 'the pinned revision');
  const changes = compareRevisions(pinned, archive);
  const info = (f: Fetched): RevisionInfo => ({ ...f, sha256: sha256(f.bytes), bytes: f.bytes.length });
  const dated = pin.date && pin.date === pin.pinnedAt ? 'pinned' : 'commit';
  const was: RevisionInfo = {
    commit: pin.commit,
    date: pin.date ?? null,
    dated,
    from: pin.url ?? pin.cacheFile,
    sha256: pin.sha256,
    bytes: pin.bytes,
  };
  const report = formatReport(changes, was, info(next), pin.repository);
  log(report);
  const refused = refusal(changes, o);
  if (refused) {
    (o.warn ?? ((line: string) => console.error(line)))(`data:update: ${refused}`);
    return { status: 'refused', report, exitCode: 1 };
  }
  await accept({
    root,
    pin,
    next,
    archive,
    report,
    changelog: path.resolve(o.changelog ?? path.join(root, 'CHANGELOG.md')),
    reportFile: o.report,
    now,
  });
  log(
    `data:update: pinned in ${PIN_PATH}, cached in ${pin.cacheFile}, recorded in ${SUMMARY_PATH} and CHANGELOG.md. Next: npm run build, npm test, commit data/ and CHANGELOG.md`,
  );
  const stale =
    c.env.ARCHIVE_SOURCE &&
    sha256(
      await readFileBounded(path.resolve(c.env.ARCHIVE_SOURCE), 'ARCHIVE_SOURCE', c.maxBytes, c.timeoutMs).catch(() =>
        Buffer.alloc(0),
      ),
    ) !== sha256(next.bytes);
  if (stale)
    log(
      `data:update: ARCHIVE_SOURCE (${c.env.ARCHIVE_SOURCE}) is not the new revision: unset it, so that npm run build reads ${pin.cacheFile}`,
    );
  return { status: 'pinned', report, exitCode: 0 };
}

const USAGE = `usage: npm run data:update -- [--from URL|PATH [--commit SHA]] [--accept-changes] [--nominations-only]
                              [--report FILE] [--timeout SECONDS] [--max-bytes N] [--root DIR] [--changelog FILE]

Finds the newest revision of oscars.csv in the pinned repository (GitHub's REST
API at GITHUB_API_URL, default https://api.github.com; GITHUB_TOKEN is sent when
set), compares it with the revision pinned in data/source.json and prints what
changed. When nothing is lost it pins the new revision: data/source.json,
data/cache/, data/archive-summary.json and an entry in CHANGELOG.md.

  --from URL|PATH     take this file instead of asking GitHub
  --commit SHA        the upstream commit --from is (recorded, with its raw URL)
  --accept-changes    pin it even though it removes ceremonies, nominations or wins
  --nominations-only  pin it even though a new ceremony has no winners yet
  --report FILE       also write the report here when a revision is pinned
  --timeout SECONDS   give up on a download or a read after this long (default 60)
  --max-bytes N       refuse a revision larger than N bytes, at most 1 GB (default
                      DATA_MAX_BYTES, else 20 MB; today's oscars.csv is 2.2 MB)
  --root DIR          the checkout to update (default this one)
  --changelog FILE    default CHANGELOG.md in the checkout

The new revision is compared with the pinned one, read from ARCHIVE_SOURCE or
data/cache/ (npm run data:fetch puts it there) or downloaded.

Exit 0: pinned, or nothing new. Exit 1: refused, nothing written. Exit 2: an
error (network, a file too large or too slow, one that does not parse or
repeats rows), nothing written.
`;

export const UPDATE_COMMAND = {
  name: 'data:update',
  usage: USAGE,
  options: {
    from: { type: 'string' },
    commit: { type: 'string' },
    'accept-changes': { type: 'boolean', default: false },
    'nominations-only': { type: 'boolean', default: false },
    report: { type: 'string' },
    timeout: { type: 'string' },
    'max-bytes': { type: 'string' },
    root: { type: 'string' },
    changelog: { type: 'string' },
  },
} as const;

/** Command line: the report, then exit 0 (pinned or current), 1 (refused) or 2 (one line saying what to do). */
export async function main(argv = process.argv.slice(2)): Promise<number> {
  const { values } = commandLine(UPDATE_COMMAND, argv);
  const seconds = values.timeout === undefined ? DEFAULT_TIMEOUT_MS / 1000 : Number(values.timeout);
  if (!(seconds > 0)) {
    console.error(
      `data:update: --timeout must be a number of seconds above 0, found ${JSON.stringify(values.timeout)}; see --help`,
    );
    return 2;
  }
  const maxBytes = values['max-bytes'] === undefined ? undefined : Number(values['max-bytes']);
  if (maxBytes !== undefined && !(Number.isInteger(maxBytes) && maxBytes > 0 && maxBytes <= MAX_SOURCE_BYTES_BOUND)) {
    console.error(
      `data:update: --max-bytes must be a whole number of bytes from 1 to ${MAX_SOURCE_BYTES_BOUND} (1 GB), found ${JSON.stringify(values['max-bytes'])}; see --help`,
    );
    return 2;
  }
  try {
    const result = await update({
      maxBytes,
      from: values.from,
      commit: values.commit,
      acceptChanges: values['accept-changes'],
      nominationsOnly: values['nominations-only'],
      report: values.report,
      root: values.root,
      changelog: values.changelog,
      timeoutMs: seconds * 1000,
    });
    return result.exitCode;
  } catch (error) {
    console.error(
      `data:update: ${error instanceof UpdateError ? error.message : `failed, nothing written: ${(error as Error).message}`}`,
    );
    return 2;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename))
  process.exitCode = await main();
