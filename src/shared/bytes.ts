/** `chunks` laid end to end in one array. */
export function concatBytes(chunks: Uint8Array[]): Uint8Array {
  const all = new Uint8Array(chunks.reduce((n, chunk) => n + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.length;
  }
  return all;
}

/**
 * The bytes of `stream` laid end to end, or null once they pass `maxBytes`;
 * when `late` rejects first, its error. Either way, what is left of the
 * stream is not read: it is cancelled.
 */
export async function readAtMost(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
  late?: Promise<never>,
): Promise<Uint8Array | null> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await (late ? Promise.race([reader.read(), late]) : reader.read());
      if (done) break;
      size += value.length;
      if (size > maxBytes) return null;
      chunks.push(value);
    }
    finished = true;
  } finally {
    if (!finished) await reader.cancel().catch(() => {}); // too large or too slow: stop reading the rest
  }
  return concatBytes(chunks);
}
