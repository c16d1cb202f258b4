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
import { wholeNumberSetting } from '../src/limits.ts';

/** Most bytes a revision of the source may have, unless DATA_MAX_BYTES says otherwise. */
export const DEFAULT_MAX_SOURCE_BYTES = 20 * 1024 * 1024;
/** Most bytes of GitHub's answer naming the newest commit (a few KB in practice). */
export const MAX_API_ANSWER_BYTES = 1024 * 1024;

/** A read passed its size or time limit: the command stops with exit 2 and this one line. */
export class ReadLimitError extends Error {}

/** DATA_MAX_BYTES as a number of bytes, or the default; a RangeError naming it for anything but a whole number from 1. */
export const maxSourceBytes = (env: NodeJS.ProcessEnv = process.env) => wholeNumberSetting('DATA_MAX_BYTES', env.DATA_MAX_BYTES, DEFAULT_MAX_SOURCE_BYTES, 1);

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(bytes < 1024 * 1024 ? 2 : 0)} MB`;

/** The chunks of `body` together, or a ReadLimitError once more than `maxBytes` arrived (`stop` is then called to end the read). */
async function collect(body: AsyncIterable<Uint8Array>, maxBytes: number, what: string, stop: () => void): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of body) {
    length += chunk.length;
    if (length > maxBytes) {
      stop();
      throw new ReadLimitError(`${what} is larger than ${megabytes(maxBytes)} (${maxBytes} bytes, DATA_MAX_BYTES); nothing written. If a revision really is that large, set DATA_MAX_BYTES higher`);
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
export async function readFileBounded(file: string, what: string, maxBytes: number, timeoutMs: number): Promise<Buffer> {
  const fd = await promisify(open)(file, constants.O_RDONLY | constants.O_NONBLOCK);
  const stat = await promisify(fstat)(fd).catch((error: Error) => {
    closeSync(fd);
    throw error;
  });
  const stream: Readable = stat.isFIFO() || stat.isSocket() ? new Socket({ fd, readable: true, writable: false }) : createReadStream('', { fd, highWaterMark: 256 * 1024 });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new ReadLimitError(`${what} did not finish reading within ${timeoutMs / 1000} s; nothing written`));
      stream.destroy();
    }, timeoutMs);
  });
  const read = collect(stream, maxBytes, what, () => stream.destroy());
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
export async function fetchBounded(fetchImpl: typeof fetch, url: string, what: string, options: { headers?: Record<string, string>; timeoutMs: number; maxBytes: number }): Promise<Buffer> {
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
    throw new ReadLimitError(`${what} is larger than ${megabytes(options.maxBytes)} (${options.maxBytes} bytes, DATA_MAX_BYTES): its answer says ${length} bytes; nothing written`);
  }
  if (!response.body) return Buffer.alloc(0);
  return collect(response.body as unknown as AsyncIterable<Uint8Array>, options.maxBytes, what, () => controller.abort());
}
