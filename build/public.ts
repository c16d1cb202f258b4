/** Files the build publishes outside the private data folder (public by design). */
import type { Manifest } from '../src/types.ts';

export function publicFiles(_manifest: Manifest): Map<string, Uint8Array> {
  return new Map();
}
