/**
 * The Node server's compression (adapters/_node/encoding.ts): an encodable
 * answer is compressed once by ETag, however many ask at once, and its copy
 * decodes to the answer; anything else is sent as it is.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { answerTags, Encoder } from '../../adapters/_node/encoding.ts';
import type { ApiReply } from '../../src/http/reply.ts';

const bytes = new TextEncoder().encode(
  JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ year: String(1929 + (i % 97)), category: 'Actor' }))),
);
const answer = (): ApiReply => ({
  status: 200,
  headers: { etag: '"0123456789abcdef0123"', 'content-length': String(bytes.length) },
  body: bytes,
  encodable: { bytes },
});

describe('the Node server compresses', () => {
  it('an encodable answer once however many ask at once, under its own ETag, decoding to the answer', async () => {
    const encoder = new Encoder();
    const replies = await Promise.all(Array.from({ length: 5 }, () => encoder.encode(answer(), 'gzip, br')));
    expect(new Set(replies.map((r) => r.body)).size).toBe(1);
    expect(replies[0].headers).toMatchObject({
      etag: '"0123456789abcdef0123-br"',
      'content-encoding': 'br',
      vary: 'Accept-Encoding',
      'content-length': String(replies[0].body!.length),
    });
    expect(Buffer.from(brotliDecompressSync(replies[0].body!))).toEqual(Buffer.from(bytes));
    const gzipped = await encoder.encode(answer(), 'gzip');
    expect(Buffer.from(gunzipSync(gzipped.body!))).toEqual(Buffer.from(bytes));
    expect(encoder.bytes).toBeGreaterThan(0);
  });

  it('nothing for a client that accepts no encoding, nor a reply not marked encodable', async () => {
    const encoder = new Encoder();
    const plain = await encoder.encode(answer(), undefined);
    expect([plain.body, plain.headers.etag, plain.headers['content-encoding'], plain.headers.vary]).toEqual([
      bytes,
      '"0123456789abcdef0123"',
      undefined,
      'Accept-Encoding',
    ]);
    const error: ApiReply = { status: 404, headers: {}, body: bytes };
    expect(await encoder.encode(error, 'br')).toBe(error);
  });

  it("reads a copy's ETag back as its answer's", () => {
    expect(answerTags('"0123456789abcdef0123-br", W/"0123456789abcdef0123-gzip"')).toBe(
      '"0123456789abcdef0123", W/"0123456789abcdef0123"',
    );
  });
});
