/**
 * Which paths reach an edge function, as netlify.toml declares them
 * (`[[edge_functions]]` with `path`, `excludedPath`, `function`): the one
 * source of truth for routing. The local CDN stand-in (netlify-edge.ts, under
 * Deno, which `npm run dev:netlify` and the tests run) routes by it, and the
 * deploy test (under Node) checks it against the manifest Netlify's bundler
 * writes. Plain TypeScript: loads in both runtimes.
 */
import { parse } from 'smol-toml';

/** One `[[edge_functions]]` entry of netlify.toml. */
export interface EdgeDeclaration {
  /** The function's name (its file name in the edge functions folder). */
  function: string;
  /** A glob: `*` matches anything, `/` included. */
  path: string;
  /** Globs this declaration leaves to the CDN. */
  excludedPath?: string | string[];
}

/** The declarations of function `name` in netlify.toml's text. */
export function edgeDeclarations(toml: string, name: string): EdgeDeclaration[] {
  const declared = (parse(toml).edge_functions ?? []) as unknown as EdgeDeclaration[];
  const mine = declared.filter((d) => d.function === name);
  if (mine.length === 0)
    throw new Error(`Expected netlify.toml to declare [[edge_functions]] with function = "${name}"`);
  return mine;
}

const glob = (pattern: string) =>
  new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*')}$`);

/** Whether a request for `pathname` runs function `name`, by netlify.toml's declarations. */
export function edgeRouter(toml: string, name: string): (pathname: string) => boolean {
  const rules = edgeDeclarations(toml, name).map((d) => ({
    path: glob(d.path),
    excluded: [d.excludedPath ?? []].flat().map(glob),
  }));
  return (pathname) => rules.some((r) => r.path.test(pathname) && !r.excluded.some((e) => e.test(pathname)));
}
