/**
 * Before dist/ goes where answers are streamed unchecked (Cloudflare's static
 * assets: the Worker passes an answer's own file on without hashing it), each
 * stored file is checked here against its name, the first 20 hex digits of
 * the sha256 of its bytes; and every stored file the build names must be
 * there: each ref of the manifest, and each ref of the stored indexes it
 * names (shards, id shards, the category index: walked through, JSON values
 * that parse as refs, line by line for the category index), by its own file
 * or its pack. An extra or changed file is caught by the first check, a
 * missing one only by the second.
 *
 * `npm run deploy:cloudflare` refuses on either; so does the Netlify build
 * (netlify.toml runs `node cli/check-stored.ts` after `npm run build`, so a
 * publish folder lacking a file the manifest names is never uploaded):
 *   node cli/check-stored.ts [dist]   (default DIST_DIR or dist/; exit 1 with one line)
 */
import { access, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { sha256 } from '../build/archive/source.ts';
import {
  contentId,
  DATA_PREFIX,
  dataPath,
  MANIFEST_PATH,
  type ParsedRef,
  parseRef,
  type Place,
} from '../src/store/refs.ts';
import { DIST } from './lib/paths.ts';

const gunzip = promisify(zlib.gunzip);
/**
 * Far above any pack the build writes (the full archive's largest
 * inflates to 0.24 MiB); a longer one is refused as damaged.
 */
const PACK_MAX_INFLATED = 64 * 1024 * 1024;

export async function storedFilesNotMatchingTheirNames(dist: string): Promise<string[]> {
  const stored = path.join(dist, DATA_PREFIX, 'r');
  const wrong: string[] = [];
  for (const entry of await readdir(stored, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    if (contentId(sha256(await readFile(file))) !== entry.name) wrong.push(path.relative(dist, file));
  }
  return wrong.sort();
}

/** Every string among a JSON value's values (never its keys) that parses as a ref. */
function* refsIn(value: unknown): Generator<string> {
  if (typeof value === 'string') {
    if (parseRef(value)) yield value;
  } else if (Array.isArray(value)) {
    for (const item of value) yield* refsIn(item);
  } else if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) yield* refsIn(item);
  }
}

/**
 * The bytes of a stored file of dist/ (null when it is not there); packs read
 * (and a pack of answers inflated) once each, since many refs slice one.
 */
function storedBytes(dist: string) {
  const packs = new Map<string, Buffer | null>();
  return async (file: string, pack: boolean, inflate: boolean): Promise<Buffer | null> => {
    if (!pack) return readFile(path.join(dist, file)).catch(() => null);
    const key = `${file} ${inflate}`;
    if (!packs.has(key)) {
      const bytes = await readFile(path.join(dist, file)).catch(() => null);
      packs.set(
        key,
        bytes && inflate ? await gunzip(bytes, { maxOutputLength: PACK_MAX_INFLATED }).catch(() => null) : bytes,
      );
    }
    return packs.get(key)!;
  };
}

/** The bytes a place names: its own file, or its range of a pack (inflated first); null when the file is not there or a pack does not inflate. */
async function placeBytes(bytesOf: ReturnType<typeof storedBytes>, place: Place): Promise<Buffer | null> {
  const { file, range } = place;
  const bytes = await bytesOf(dataPath(file)!, range !== null, range !== null);
  return bytes && range ? bytes.subarray(range[0], range[1]) : bytes;
}

/**
 * A stored file's JSON: the file's value, or each line's (the
 * category index is lines of JSON); none when it is neither.
 */
function jsonValues(text: string): unknown[] {
  try {
    return [JSON.parse(text)];
  } catch {
    return text.split('\n').flatMap((line) => {
      try {
        return [JSON.parse(line)];
      } catch {
        return [];
      }
    });
  }
}

/**
 * Every ref the build names, each visited once: the manifest's, and those of
 * each stored JSON file one names (walked through its identity bytes, a
 * value or lines of values: an index names more refs, an answer none); null when the manifest is missing
 * or not JSON.
 */
async function storedRefs(
  dist: string,
  bytesOf: ReturnType<typeof storedBytes>,
  visit: (parsed: ParsedRef) => Promise<void>,
): Promise<boolean> {
  let manifest: unknown;
  try {
    manifest = JSON.parse(await readFile(path.join(dist, MANIFEST_PATH), 'utf8'));
  } catch {
    return false;
  }
  const seen = new Set<string>();
  const queue = [...refsIn(manifest)];
  while (queue.length > 0) {
    const ref = queue.pop()!;
    if (seen.has(ref)) continue;
    seen.add(ref);
    const parsed = parseRef(ref)!;
    await visit(parsed);
    const own = await placeBytes(bytesOf, parsed.at);
    if (!own || (own[0] !== 0x7b && own[0] !== 0x5b)) continue; // `{` or `[`: JSON; anything else holds no refs
    for (const value of jsonValues(own.toString('utf8')))
      for (const inner of refsIn(value)) if (!seen.has(inner)) queue.push(inner);
  }
  return true;
}

/**
 * The stored files (paths under dist/) that the build names but dist/ lacks:
 * `_data/manifest.json` itself when it is missing or not JSON; else every
 * file a ref of the manifest, or of a stored JSON file one names, points to
 * (its own file or its pack).
 */
export async function storedFilesMissing(dist: string): Promise<string[]> {
  const missing = new Set<string>();
  const exists = new Map<string, boolean>();
  const isThere = async (file: string): Promise<boolean> => {
    if (!exists.has(file))
      exists.set(
        file,
        await access(path.join(dist, file)).then(
          () => true,
          () => false,
        ),
      );
    return exists.get(file)!;
  };
  const found = await storedRefs(dist, storedBytes(dist), async (parsed) => {
    const file = dataPath(parsed.at.file);
    if (file && !(await isThere(file))) missing.add(file);
  });
  return found ? [...missing].sort() : [MANIFEST_PATH];
}

const some = (files: string[]) => `${files.slice(0, 3).join(', ')}${files.length > 3 ? ', ...' : ''}`;

/**
 * Why dist/ may not be deployed, in one line, or null: a stored
 * file changed (or extra), or one the manifest names missing.
 */
export async function storedFilesProblem(dist: string): Promise<string | null> {
  const wrong = await storedFilesNotMatchingTheirNames(dist);
  if (wrong.length > 0)
    return `${wrong.length} file(s) of dist/ no longer hold the bytes their names (hashes) promise, ${some(wrong)}: rebuild with npm run build`;
  // A missing file passes the check above (it checks the files there are): the manifest says which must be there.
  const missing = await storedFilesMissing(dist);
  if (missing.length > 0)
    return `${missing.length} file(s) the manifest names are missing from dist/, ${some(missing)}: rebuild with npm run build`;
  return null;
}

if (import.meta.main) {
  const dist = path.resolve(process.argv[2] ?? DIST);
  const problem = await storedFilesProblem(dist).catch((error: Error) => `cannot read ${dist}: ${error.message}`);
  if (problem) {
    console.error(`check-stored: ${problem}`);
    process.exit(1);
  }
  console.log(
    `check-stored: every stored file of ${path.relative(process.cwd(), dist) || '.'} is there and holds the bytes its name promises`,
  );
}
