/**
 * Reading a revision of the source from outside (a file, a URL, GitHub's API)
 * with a size and a time limit, for data:update and data:fetch: bytes are
 * counted as they arrive and the read stops the moment it passes the limit,
 * so `/dev/zero`, an endless answer or a 200 MB file costs at most the limit
 * in memory, never the whole. Today's oscars.csv is 2.2 MB; the default
 * limit, 20 MB, leaves it ten years of room (DATA_MAX_BYTES sets another).
 */
import { closeSync, constants, createReadStream, fstat, open } from 'node:fs';
import { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { wholeNumberSetting } from '../../src/shared/limits.ts';

/** Most bytes a revision of the source may have, unless DATA_MAX_BYTES says otherwise. */
export const DEFAULT_MAX_SOURCE_BYTES = 20 * 1024 * 1024;
/** Most bytes of GitHub's answer naming the newest commit (a few KB in practice). */
export const MAX_API_ANSWER_BYTES = 1024 * 1024;

/** A read passed its size or time limit: the command stops with exit 2 and this one line. */
export class ReadLimitError extends Error {}

/**
 * The most a limit may be set to (DATA_MAX_BYTES, --max-bytes): 1 GB, about
 * 450 times today's file. The bytes are held whole, and joined once, so a
 * limit far above this lets a huge source read until Node runs out of memory.
 */
export const MAX_SOURCE_BYTES_BOUND = 1024 * 1024 * 1024;

/**
 * DATA_MAX_BYTES as a number of bytes, or the default; a RangeError
 * naming it for anything but a whole number from 1 to 1 GB.
 */
export const maxSourceBytes = (env: NodeJS.ProcessEnv = process.env) =>
  wholeNumberSetting('DATA_MAX_BYTES', env.DATA_MAX_BYTES, DEFAULT_MAX_SOURCE_BYTES, 1, MAX_SOURCE_BYTES_BOUND);

/** What the size-limit line advises for a revision: the setting that raises the limit. */
export const SOURCE_LIMIT_ADVICE = 'If a revision really is that large, set DATA_MAX_BYTES higher';

/** A limit as people read it: "20 MB (20971520 bytes)", or "1000 bytes" under a megabyte. */
const size = (bytes: number) =>
  bytes < 1024 * 1024 ? `${bytes} bytes` : `${Math.round(bytes / 1024 / 1024)} MB (${bytes} bytes)`;

/** The one line for `what` past `maxBytes`, with `advice` when a setting can raise the limit. */
const tooLarge = (what: string, maxBytes: number, advice: string | null, told = '') =>
  `${what} is larger than ${size(maxBytes)}${told}; nothing written${advice ? `. ${advice}` : ''}`;

/**
 * The chunks of `body` together, or a ReadLimitError once more
 * than `maxBytes` arrived (`stop` is then called to end the read).
 */
async function collect(
  body: AsyncIterable<Uint8Array>,
  maxBytes: number,
  what: string,
  stop: () => void,
  advice: string | null,
): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of body) {
    length += chunk.length;
    if (length > maxBytes) {
      stop();
      throw new ReadLimitError(tooLarge(what, maxBytes, advice));
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, length);
}

/**
 * A file's bytes, within `maxBytes` and `timeoutMs` (a pipe or a device may
 * never end). A pipe (`--from /dev/stdin`, a named pipe) is read as a socket
 * is, without blocking: a blocking read of a pipe nobody writes to would hold
 * a thread that even process.exit waits for, so the command would never end.
 * It is opened without blocking too, for the same reason.
 */
export async function readFileBounded(
  file: string,
  what: string,
  maxBytes: number,
  timeoutMs: number,
  advice: string | null = SOURCE_LIMIT_ADVICE,
): Promise<Buffer> {
  const fd = await promisify(open)(file, constants.O_RDONLY | constants.O_NONBLOCK);
  const stat = await promisify(fstat)(fd).catch((error: Error) => {
    closeSync(fd);
    throw error;
  });
  const stream: Readable =
    stat.isFIFO() || stat.isSocket()
      ? new Socket({ fd, readable: true, writable: false })
      : createReadStream('', { fd, highWaterMark: 256 * 1024 });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new ReadLimitError(`${what} did not finish reading within ${timeoutMs / 1000} s; nothing written`));
      stream.destroy();
    }, timeoutMs);
  });
  const read = collect(stream, maxBytes, what, () => stream.destroy(), advice);
  read.catch(() => {}); // the stream's own end, once the time limit has answered
  try {
    return await Promise.race([read, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * GET `url` within `timeoutMs` for headers and body together and within
 * `maxBytes`; a non-2xx status throws `HTTP <status>`. A ReadLimitError for a
 * limit passed; other failures as fetch throws them (TimeoutError on time).
 */
export async function fetchBounded(
  fetchImpl: typeof fetch,
  url: string,
  what: string,
  options: { headers?: Record<string, string>; timeoutMs: number; maxBytes: number; advice?: string | null },
): Promise<Buffer> {
  const advice = options.advice === undefined ? SOURCE_LIMIT_ADVICE : options.advice;
  const controller = new AbortController();
  const signal = AbortSignal.any([controller.signal, AbortSignal.timeout(options.timeoutMs)]);
  const response = await fetchImpl(url, { headers: options.headers, signal });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`HTTP ${response.status}`);
  }
  const length = Number(response.headers.get('content-length') ?? NaN);
  if (length > options.maxBytes) {
    controller.abort();
    throw new ReadLimitError(tooLarge(what, options.maxBytes, advice, `: its answer says ${length} bytes`));
  }
  if (!response.body) return Buffer.alloc(0);
  return collect(
    response.body as unknown as AsyncIterable<Uint8Array>,
    options.maxBytes,
    what,
    () => controller.abort(),
    advice,
  );
}
