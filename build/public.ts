/** Files the build publishes outside the private data folder (public by design). */
import { openApiJson } from './openapi.ts';
import { portalFiles } from './portal-files.ts';
import { referencePage } from './reference.ts';
import type { Manifest } from '../src/types.ts';

const encoder = new TextEncoder();

/** `openapi.json` (servers from PUBLIC_BASE_URL), the reference page `index.html` and the key portal, at the root of dist/. */
export function publicFiles(manifest: Manifest, env: Record<string, string | undefined> = process.env): Map<string, Uint8Array> {
  return new Map([
    ['openapi.json', encoder.encode(openApiJson(manifest, env))],
    ['index.html', encoder.encode(referencePage(manifest))],
    ...portalFiles(),
  ]);
}
