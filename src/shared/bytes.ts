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
