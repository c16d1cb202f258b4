/**
 * The key portal page (public by design): `portal.html`, `portal.css`,
 * `portal.js` and the site's `favicon.svg` at the top of dist/, served at `/portal` (Netlify's pretty URLs;
 * the Node server maps `/portal` to `portal.html` the same way). Sources live
 * in build/site/portal/ as plain files.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

export const PORTAL_SOURCE = path.join(import.meta.dirname, 'portal');
export const PORTAL_FILES = ['portal.html', 'portal.css', 'portal.js', 'favicon.svg'] as const;

/** Also `portal/index.html`, the same page, so that `/portal/` serves it on every host (its links are absolute). */
export function portalFiles(): Map<string, Uint8Array> {
  const files = new Map(
    PORTAL_FILES.map((name) => [name, new Uint8Array(readFileSync(path.join(PORTAL_SOURCE, name)))] as const),
  );
  return new Map([...files, ['portal/index.html', files.get('portal.html')!]]);
}
