/**
 * npm run data:fetch: puts the pinned source revision named in
 * data/source.json into data/cache/, after checking its sha256. With
 * ARCHIVE_SOURCE set it copies that file (a build without network, such as
 * `netlify build --offline`); otherwise, unless the cache already holds the
 * pinned revision (checked, then left as it is: no network needed), it
 * downloads the pinned URL. Every failure is one line saying what to do;
 * nothing unverified is ever saved.
 */
import path from 'node:path';
import { commandLine } from '../../lib/command-line.ts';
import { writeWhole } from '../../lib/write-whole.ts';
import source from '../../data/source.json' with { type: 'json' };
import { fetchBounded, maxSourceBytes, ReadLimitError, readFileBounded } from '../archive/bounded.ts';
import { CACHE_FILE, sha256 } from '../archive/source.ts';

/** How long a download or a copy may take. */
const TIMEOUT_MS = 60_000;

export interface FetchOptions {
  /** Downloads the pinned URL; tests pass one that fails or lies. */
  fetch?: typeof fetch;
  /** Where the verified copy goes. */
  target?: string;
  /** Read for ARCHIVE_SOURCE. */
  env?: NodeJS.ProcessEnv;
}

/**
 * Where the bytes came from, for the one line the command prints;
 * `from` is the target itself when the cache already held them.
 */
export interface Fetched {
  target: string;
  from: string;
}

/**
 * Whether `target` already holds the pinned revision: read within
 * the limits, hashed; a missing or other file is simply not it.
 */
async function holdsPinned(target: string, maxBytes: number): Promise<boolean> {
  try {
    return (
      sha256(await readFileBounded(target, `the cached source (${target})`, maxBytes, TIMEOUT_MS)) === source.sha256
    );
  } catch {
    return false;
  }
}

async function download(fetchImpl: typeof fetch, maxBytes: number): Promise<Buffer> {
  // data:update pins a file given by path without a URL: only a local copy can be checked against it.
  if (!source.url)
    throw new Error(
      'the pinned revision has no download URL (it was pinned from a file); set ARCHIVE_SOURCE=/path/to/that oscars.csv',
    );
  try {
    return await fetchBounded(fetchImpl, source.url, source.url, { timeoutMs: TIMEOUT_MS, maxBytes });
  } catch (error) {
    if (error instanceof ReadLimitError) throw error;
    const reason =
      (error as Error).name === 'TimeoutError'
        ? `no whole answer within ${TIMEOUT_MS / 1000} s`
        : (error as Error).message;
    throw new Error(
      `cannot download ${source.url} (${reason}); set ARCHIVE_SOURCE=/path/to/oscars.csv to use a local copy instead`,
    );
  }
}

async function readLocal(file: string, maxBytes: number): Promise<Buffer> {
  try {
    return await readFileBounded(file, `ARCHIVE_SOURCE (${file})`, maxBytes, TIMEOUT_MS);
  } catch (error) {
    if (error instanceof ReadLimitError) throw error;
    throw new Error(
      `ARCHIVE_SOURCE points at ${file}, which cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
}

export async function fetchData(options: FetchOptions = {}): Promise<Fetched> {
  const { target = CACHE_FILE, env = process.env } = options;
  const local = env.ARCHIVE_SOURCE ? path.resolve(env.ARCHIVE_SOURCE) : undefined;
  const maxBytes = maxSourceBytes(env);
  if (!local && (await holdsPinned(target, maxBytes))) return { target, from: target };
  const bytes = local ? await readLocal(local, maxBytes) : await download(options.fetch ?? fetch, maxBytes);
  const from = local ?? source.url;
  const sha = sha256(bytes);
  if (sha !== source.sha256) {
    throw new Error(
      `${from} has sha256 ${sha}, expected ${source.sha256} (the revision pinned in data/source.json); nothing saved` +
        (local ? '. For a new revision, update data/source.json first' : ''),
    );
  }
  await writeWhole(target, bytes);
  return { target, from };
}

const USAGE = `usage: npm run data:fetch

Puts the source revision pinned in data/source.json into data/cache/, after
checking its sha256: copied from ARCHIVE_SOURCE when that is set (no network);
otherwise kept as it is when data/cache/ already holds that revision (checked,
no network), else downloaded from the pinned URL. Nothing unverified is saved. A
source larger than DATA_MAX_BYTES (default 20 MB, at most 1 GB; today's is 2.2 MB) or one
that takes longer than 60 s is refused with exit 2.

Exit 0 saved; 1 a failure (the line says what to do); 2 over a limit.

  -h, --help   this text`;

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  commandLine({ name: 'data:fetch', usage: USAGE, options: {} });
  try {
    const { target, from } = await fetchData();
    console.log(
      from === target
        ? `${target} already holds the pinned revision (sha256 verified); nothing downloaded`
        : `saved ${target} from ${from} (sha256 verified)`,
    );
  } catch (error) {
    console.error(`data:fetch: ${(error as Error).message}`);
    process.exitCode = error instanceof ReadLimitError || error instanceof RangeError ? 2 : 1;
  }
}
