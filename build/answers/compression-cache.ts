/**
 * The compressed copies of earlier builds, kept so a rebuild does not make
 * them again: gzip at level 9 and brotli at quality 10 (8 for answers under
 * 4 KiB) take most of a cold build, and their bytes are fixed (an answer's
 * compressed copy, and so its ETag, must not change from build to build). One file, data/cache/compressed.bin:
 *
 *   a header line naming this format and the zlib and brotli versions (other
 *   versions may compress differently, so their copies are not reused),
 *   then per answer: its id (20 ASCII hex digits), the gzip and brotli
 *   lengths (4 bytes each, big-endian) and both copies (a pack of answers:
 *   its gzip and an empty brotli), and last the sha256 of everything before
 *   it.
 *
 * A file that is damaged, of another format or too large is ignored (one
 * line says so) and replaced after the build; deleting it only makes the next
 * build slower. Its checksum only catches damage (anyone editing the file can
 * make it again), so the build reuses a copy only once it decoded to its
 * answer (`decodeTo`); one that does not is made again,
 * and one line counts them. It is written whole to a temporary file and renamed, so
 * builds running at once each see a complete file.
 */
import { createHash } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import fs from 'fs-extra';
import { readFileBounded } from '../archive/bounded.ts';
import { ROOT } from '../archive/source.ts';
import { ID_LENGTH } from '../../src/store/refs.ts';

export const COMPRESSION_CACHE_FILE = path.join(ROOT, 'data/cache/compressed.bin');
/** Larger than the full archive's copies (about 25 MB) with room for a few years more, yet bounded. */
const MAX_BYTES = 256 * 1024 * 1024;
const READ_TIMEOUT_MS = 30_000;
const HEADER = `faa-compressed 3 zlib ${process.versions.zlib} brotli ${process.versions.brotli}\n`;

export type Copies = readonly [gzip: Uint8Array, br: Uint8Array];

const gunzip = promisify(zlib.gunzip);
const unbrotli = promisify(zlib.brotliDecompress);

/** Whether `decode` makes exactly `bytes` of `encoded`, decoding no further than one byte past them. */
async function decodesTo(decode: typeof gunzip, encoded: Uint8Array, bytes: Uint8Array): Promise<boolean> {
  try {
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).equals(await decode(encoded, { maxOutputLength: bytes.length + 1 }));
  } catch {
    return false; // not of that encoding, or longer than the answer
  }
}

/**
 * Whether `copies` decode to `bytes`: the copies of an earlier build are
 * reused only so, since the file that keeps them is checked only by a hash
 * anyone editing it can make again, and a copy is what a client is sent.
 */
export async function decodeTo(bytes: Uint8Array, [gzipped, brotlied]: Copies): Promise<boolean> {
  const [a, b] = await Promise.all([decodesTo(gunzip, gzipped, bytes), decodesTo(unbrotli, brotlied, bytes)]);
  return a && b;
}

/**
 * A pack of answers keeps only its gzip (src/store/refs.ts): its brotli slot is empty, which no answer's copy can be.
 */
export const NO_COPY = new Uint8Array(0);

/** Whether `gzipped` decodes to `bytes` (a pack's one copy). */
export const gunzipsTo = (bytes: Uint8Array, gzipped: Uint8Array): Promise<boolean> => decodesTo(gunzip, gzipped, bytes);

/** The copies a file holds, by answer id; an empty map (and the reason, logged) when there is none to use. */
export async function readCompressionCache(file: string, log: (line: string) => void): Promise<Map<string, Copies>> {
  const copies = new Map<string, Copies>();
  if (!(await fs.pathExists(file))) return copies;
  let bytes: Buffer;
  try {
    bytes = await readFileBounded(file, 'the compression cache', MAX_BYTES, READ_TIMEOUT_MS, null);
  } catch (error) {
    log(`compression cache not used (${(error as Error).message}): compressing every answer`);
    return copies;
  }
  const body = bytes.subarray(0, bytes.length - 32);
  const intact = bytes.length > HEADER.length + 32 && bytes.subarray(0, HEADER.length).toString('latin1') === HEADER && createHash('sha256').update(body).digest().equals(bytes.subarray(body.length));
  if (!intact) {
    log(`compression cache ${path.relative(ROOT, file)} is damaged or of other compressors: compressing every answer`);
    return copies;
  }
  for (let at = HEADER.length; at < body.length; ) {
    const id = body.toString('latin1', at, at + ID_LENGTH);
    const gzipLength = body.readUInt32BE(at + ID_LENGTH);
    const brLength = body.readUInt32BE(at + ID_LENGTH + 4);
    const start = at + ID_LENGTH + 8;
    copies.set(id, [body.subarray(start, start + gzipLength), body.subarray(start + gzipLength, start + gzipLength + brLength)]);
    at = start + gzipLength + brLength;
  }
  return copies;
}

/**
 * Writes `used` (this build's copies) and as many of `kept` (the file's
 * others, say a full build's after a sample build) as fit the bound.
 */
export async function writeCompressionCache(file: string, used: Map<string, Copies>, kept: Map<string, Copies>): Promise<void> {
  const chunks: Uint8Array[] = [Buffer.from(HEADER, 'latin1')];
  let size = HEADER.length + 32;
  const add = (id: string, [gzip, br]: Copies) => {
    const head = Buffer.alloc(ID_LENGTH + 8);
    head.write(id, 0, 'latin1');
    head.writeUInt32BE(gzip.length, ID_LENGTH);
    head.writeUInt32BE(br.length, ID_LENGTH + 4);
    chunks.push(head, gzip, br);
    size += head.length + gzip.length + br.length;
  };
  for (const [id, copies] of used) add(id, copies);
  for (const [id, copies] of kept) {
    if (used.has(id)) continue;
    if (size + ID_LENGTH + 8 + copies[0].length + copies[1].length > MAX_BYTES) break;
    add(id, copies);
  }
  const body = Buffer.concat(chunks);
  const temp = `${file}.${process.pid}.tmp`;
  await mkdir(path.dirname(file), { recursive: true });
  try {
    await writeFile(temp, Buffer.concat([body, createHash('sha256').update(body).digest()]));
    await rename(temp, file);
  } finally {
    await rm(temp, { force: true });
  }
}
