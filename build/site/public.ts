/** Files the build publishes outside the private data folder (public by design). */
import { readFileSync } from 'node:fs';
import type { ExampleAnswers } from './examples.ts';
import { openApiJson } from './openapi.ts';
import { portalFiles } from './portal-files.ts';
import { referencePage } from './reference.ts';
import { PUBLIC_FILES } from '../../src/api/public-files.ts';
import type { Manifest } from '../../src/shared/types.ts';

const encoder = new TextEncoder();

/**
 * Where the README's section on the client package is read: the repository
 * (or homepage) package.json names; none while it names neither, since the
 * service's own package is never published.
 */
export function clientDocsUrl(
  pkg: { name: string; homepage?: string; repository?: string | { url?: string } } = JSON.parse(
    readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
  ),
): string | undefined {
  const repository = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
  const web = repository
    ?.replace(/^git\+/, '')
    .replace(/\.git$/, '')
    .replace(/^github:/, 'https://github.com/');
  const base = web && /^https?:\/\//.test(web) ? web : pkg.homepage?.replace(/#.*$/, '');
  return base ? `${base}#the-client-package` : undefined;
}

/**
 * `openapi.json` (servers from PUBLIC_BASE_URL), the reference page `index.html`
 * (with the example answers read from the built files) and the key portal, at
 * the root of dist/.
 */
export function publicFiles(
  manifest: Manifest,
  env: Record<string, string | undefined> = process.env,
  examples?: ExampleAnswers,
): Map<string, Uint8Array> {
  const page = referencePage(manifest, {
    examples,
    baseUrl: env.PUBLIC_BASE_URL || undefined,
    clientUrl: clientDocsUrl(),
  });
  const files = new Map([
    ['openapi.json', encoder.encode(openApiJson(manifest, env))],
    ['index.html', encoder.encode(page)],
    ...portalFiles(),
  ]);
  // The runtimes serve only the names in PUBLIC_FILES: a file
  // written here but not listed there would never be reachable.
  const unlisted = [...files.keys()].filter((name) => !(PUBLIC_FILES as readonly string[]).includes(name));
  if (unlisted.length || files.size !== PUBLIC_FILES.length)
    throw new Error(
      `build/site/public.ts and PUBLIC_FILES in src/api/public-files.ts disagree: ${unlisted.join(', ') || 'a listed file is not written'}`,
    );
  return files;
}
