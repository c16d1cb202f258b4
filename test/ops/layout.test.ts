/**
 * The code's layout rules, checked on the source itself: every import runs
 * down the map of folders (FLOORS) and none closes a circle; what the edge
 * function and the Worker load is runtime-agnostic (no `node:` module, nothing
 * Node-only); src/ loads no platform's package (`@netlify/*`, Cloudflare's,
 * `pg`, any Node-only one) and `node:` modules only in `*.node.ts` files; the
 * build and `npm start` load only packages of
 * `dependencies` (TypeScript is a development tool); the spec's oracle is
 * imported only by the tests; each runtime's adapter is one
 * short file, its helpers beside it (`adapters/_node/`, `_netlify/`,
 * `_cloudflare/`, `_fetch.ts`), and names its own shared-cache headers and purge
 * (src/ names none); and no function of the request path (src/, adapters/,
 * netlify/) runs over 60 lines.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * The house, from the ground up: each folder with code and the folders it may
 * import from. Every import is within a folder or runs to one named here, so
 * the arrows only point down (a folder names only folders listed before it)
 * and `build/` never imports `cli/`.
 */
export const FLOORS: [folder: string, mayImport: string[]][] = [
  ['src/shared', []], // shapes of the answers, the routes, limits, messages, small tools
  ['src/client', ['src/shared']], // the client package: bundled with what it uses of src/shared into client.js, which loads alone
  ['src/store', ['src/shared', 'src/client']], // the stored layout and its reader; rankings through the client's ranking maker, so the offline client's are the service's
  ['src/http', ['src/shared', 'src/store', 'src/client']], // a request read (a ranking's segments checked by the client's own rules), a reply made, shared-cache headers
  ['src/keys', ['src/shared']], // the key contract, secrets, address and key rules, their cache
  ['src/keys/stores', ['src/shared', 'src/keys']], // the SQLite store, its legacy reader, the SQL shared with D1 and PostgreSQL
  ['src/portal', ['src/shared', 'src/http', 'src/keys']], // the developer portal's endpoints and mail
  ['src/api', ['src/shared', 'src/store', 'src/http', 'src/keys', 'src/portal']], // the front door
  ['adapters/_netlify', ['src/shared', 'src/keys']], // Netlify's parts: the Blobs key store and its wiring
  ['adapters/_cloudflare', ['src/shared', 'src/store', 'src/keys', 'src/keys/stores']], // Cloudflare's parts: the D1 key store, the files the Worker carries
  ['adapters/_node', ['src/shared', 'src/store', 'src/http', 'src/keys', 'src/keys/stores', 'src/portal']], // the Node server's parts, the PostgreSQL key store among them
  [
    'adapters',
    [
      'adapters/_netlify',
      'adapters/_cloudflare',
      'adapters/_node',
      'src/shared',
      'src/store',
      'src/http',
      'src/keys',
      'src/keys/stores',
      'src/portal',
      'src/api',
    ],
  ],
  ['netlify/edge-functions', ['adapters']],
  ['netlify/functions', ['adapters']],
  ['lib', ['src/shared']], // what every command shares: its command-line reader, a free port, a file written whole
  ['build/archive', ['src/shared', 'data']], // the source: where it comes from, its importer, bounded reads, the guard
  // the stored answers, the dataset, the search index; the
  // records through the client's record maker, so the offline client's are the service's
  ['build/answers', ['src/shared', 'src/store', 'src/client', 'lib', 'build/archive']],
  // the public files (reference page, portal, OpenAPI) and the client package
  ['build/site', ['src/shared', 'src/store', 'src/http', 'src/keys', 'src/api', 'src/client', 'lib']],
  ['build/update', ['src/shared', 'src/keys', 'data', 'lib', 'build/archive']], // the yearly update and data:fetch
  // the build itself: dist/ written, and whether it is stale
  ['build', ['src/shared', 'src/store', 'data', 'lib', 'build/archive', 'build/answers', 'build/site']],
  // what the commands share
  [
    'cli/lib',
    [
      'src/shared',
      'src/keys',
      'src/keys/stores',
      'adapters/_cloudflare',
      'adapters/_node',
      'netlify/edge-functions',
      'lib',
      'build',
    ],
  ],
  // the commands
  [
    'cli',
    [
      'src/shared',
      'src/store',
      'src/http',
      'src/keys',
      'src/keys/stores',
      'src/portal',
      'adapters/_node',
      'adapters',
      'netlify/functions',
      'lib',
      'build/archive',
      'build/answers',
      'cli/lib',
    ],
  ],
  [
    'bench',
    [
      'src/shared',
      'src/store',
      'src/http',
      'src/keys',
      'src/keys/stores',
      'src/api',
      'adapters/_netlify',
      'adapters/_cloudflare',
      'adapters/_node',
      'netlify/edge-functions',
      'lib',
      'build/archive',
      'build/answers',
      'build',
      'cli/lib',
    ],
  ],
];

/** Each import between folders that the map does not allow, as `file -> target (folder -> folder)`. */
export function wrongWayImports(files: string[], floors = FLOORS): string[] {
  const allowed = new Map(floors);
  const order = floors.map(([folder]) => folder);
  return files.flatMap((file) => {
    const from = path.dirname(file);
    return importsOf(file)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => path.relative(ROOT, path.resolve(ROOT, from, spec)))
      .flatMap((target) => {
        const to = path.dirname(target);
        if (to === from) return [];
        const may = allowed.get(from);
        if (!may) return [`${file} -> ${target} (${from} is not on the map)`];
        // A folder listed earlier than the importer's: the map's order is the floors', so this runs down.
        if (may.includes(to) && order.indexOf(to) < order.indexOf(from)) return [];
        return [`${file} -> ${target} (${from} -> ${to})`];
      });
  });
}
/**
 * Packages src/ may load: plain JavaScript that runs under Node, Deno and
 * workerd alike. A platform's package (`@netlify/*`, Cloudflare's, `pg`) or
 * any other Node-only one belongs beside its adapter, in `adapters/`.
 */
const PORTABLE_PACKAGES = ['@noble/hashes', 'p-limit'];
/** The package a bare specifier names (`@noble/hashes/sha2.js` -> `@noble/hashes`). */
const packageOf = (spec: string) => /^((?:@[^/]+\/)?[^/]+)/.exec(spec)![1];

/** Whether `file` importing `spec` ties it to one platform: a package not portable, or a `node:` module outside a `*.node.ts` file. */
export function tiesToPlatform(file: string, spec: string): boolean {
  if (spec.startsWith('.')) return false;
  if (spec.startsWith('node:')) return !file.endsWith('.node.ts');
  return !PORTABLE_PACKAGES.includes(packageOf(spec));
}

/** Each import of `files` that ties it to one platform, as `file: specifier`. */
export const platformImports = (files: string[]): string[] =>
  files.flatMap((file) =>
    importsOf(file)
      .filter((spec) => tiesToPlatform(file, spec))
      .map((spec) => `${file}: ${spec}`),
  );

const MAX_FUNCTION_LINES = 60;
/** An adapter wires one runtime's abilities to the front door: a few dozen lines. */
const MAX_ADAPTER_LINES = 60;

const sourceFiles = (dir: string): string[] =>
  readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.m?ts$/.test(e.name))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)));

/** Module specifiers a file imports or re-exports (type-only imports included: they still say where a file reaches). */
function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.ES2022, true);
  return source.statements.flatMap((s) =>
    (ts.isImportDeclaration(s) || ts.isExportDeclaration(s)) &&
    s.moduleSpecifier &&
    ts.isStringLiteral(s.moduleSpecifier)
      ? [s.moduleSpecifier.text]
      : [],
  );
}

/** The string and template literals of a file: what its code says, not its comments. */
function stringsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) found.push(node.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every project file a module loads at run time, following relative imports (type-only ones left out). */
function runtimeGraph(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
    for (const s of source.statements) {
      // A re-export (`export { default } from`) loads its module as an import does.
      const loads =
        (ts.isImportDeclaration(s) && !s.importClause?.isTypeOnly) || (ts.isExportDeclaration(s) && !s.isTypeOnly);
      if (!loads || !s.moduleSpecifier || !ts.isStringLiteral(s.moduleSpecifier)) continue;
      const spec = s.moduleSpecifier.text;
      if (spec.startsWith('.')) visit(path.relative(ROOT, path.resolve(path.dirname(path.join(ROOT, file)), spec)));
      else seen.add(`package:${spec}`);
    }
  };
  visit(entry);
  return seen;
}

/** Functions, methods and arrow functions longer than the limit, as `file:line name (n lines)`. */
function longFunctions(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      const lines = source.getLineAndCharacterOfPosition(node.getEnd()).line + 2 - start;
      const name = (node as ts.FunctionDeclaration).name?.getText() ?? '(anonymous)';
      if (lines > MAX_FUNCTION_LINES) found.push(`${file}:${start} ${name} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Import cycles among `files` (relative imports, type-only ones included), each as `a -> b -> a`. */
function importCycles(files: string[]): string[] {
  const known = new Set(files);
  const edges = new Map(
    files.map((f) => [
      f,
      importsOf(f)
        .filter((spec) => spec.startsWith('.'))
        .map((spec) => path.relative(ROOT, path.resolve(path.dirname(path.join(ROOT, f)), spec)))
        .filter((to) => known.has(to)),
    ]),
  );
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (file: string, trail: string[]) => {
    if (state.get(file) === 'open') cycles.push([...trail.slice(trail.indexOf(file)), file].join(' -> '));
    if (state.has(file)) return;
    state.set(file, 'open');
    for (const to of edges.get(file) ?? []) visit(to, [...trail, file]);
    state.set(file, 'done');
  };
  for (const file of files) visit(file, []);
  return cycles;
}

describe('the layout', () => {
  it('runs every import down the map of folders: build/ never into cli/, bench/ never into test/', () => {
    const files = ['src', 'adapters', 'netlify', 'lib', 'build', 'cli', 'bench'].flatMap(sourceFiles);
    expect(files.length).toBeGreaterThan(80);
    expect(wrongWayImports(files)).toEqual([]);
    // The map itself points down: no folder may import one listed after it.
    for (const [i, [, may]] of FLOORS.entries())
      for (const to of may)
        expect(
          FLOORS.findIndex(([f]) => f === to),
          `${FLOORS[i][0]} -> ${to}`,
        ).toBeLessThan(i);
  });

  it('refuses an import that runs up a floor, one between siblings, and one from a folder off the map', () => {
    const floors: typeof FLOORS = [
      ['src/shared', []],
      ['src/client', ['src/shared']],
      ['src/store', ['src/shared', 'src/client']],
      ['src/keys', ['src/shared']],
    ];
    expect(wrongWayImports(['src/store/archive.ts'], floors)).toEqual([]);
    expect(
      wrongWayImports(
        ['src/store/archive.ts'],
        [
          ['src/shared', ['src/store']],
          ['src/store', []],
        ],
      ),
    ).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^src\/store\/archive\.ts -> src\/shared\/.* \(src\/store -> src\/shared\)$/),
      ]),
    );
    expect(wrongWayImports(['src/keys/rules.ts'], floors.slice(0, 3))).toEqual(
      expect.arrayContaining([expect.stringContaining('src/keys is not on the map')]),
    );
    // Named as allowed but listed above the importer: still an arrow running up.
    const upward: typeof FLOORS = [
      ['src/shared', []],
      ['src/http', ['src/shared']],
      ['src/store', []],
      ['src/portal', ['src/shared', 'src/http', 'src/keys']],
      ['src/keys', ['src/shared']],
    ];
    expect(wrongWayImports(['src/portal/portal.ts'], upward)).toEqual([
      expect.stringMatching(/^src\/portal\/portal\.ts -> src\/keys\/contract\.ts \(src\/portal -> src\/keys\)$/),
      expect.stringMatching(/^src\/portal\/portal\.ts -> src\/keys\/rules\.ts \(src\/portal -> src\/keys\)$/),
    ]);
  });

  it.each(['netlify/edge-functions/api.ts', 'adapters/cloudflare.ts'])(
    'loads nothing Node-only into %s: no node: module, nothing of adapters/_node/ or *.node.ts, no build/ or test/ file',
    (entry) => {
      const graph = [...runtimeGraph(entry)];
      expect(graph).toContain('src/api/handler.ts');
      const offending = graph.filter(
        (f) =>
          f.startsWith('package:node:') ||
          f.endsWith('.node.ts') ||
          /^(lib|build|test|bench|cli|adapters\/_node)\//.test(f),
      );
      expect(offending).toEqual([]);
    },
  );

  it.each(['build/build.ts', 'cli/start.ts'])(
    'loads into %s only packages a production install has (`dependencies`: no TypeScript)',
    (entry) => {
      const { dependencies } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      };
      const packages = [...runtimeGraph(entry)]
        .filter((f) => f.startsWith('package:') && !f.startsWith('package:node:'))
        .map((f) => packageOf(f.slice('package:'.length)));
      expect(packages).toContain('p-limit');
      expect(packages.filter((name) => !(name in dependencies))).toEqual([]);
    },
  );

  it(`keeps every runtime's adapter short: one file each in adapters/, at most ${MAX_ADAPTER_LINES} lines`, () => {
    const adapters = sourceFiles('adapters').filter((f) => !path.basename(f).startsWith('_') && !f.includes('/_'));
    expect(adapters.length).toBeGreaterThanOrEqual(4);
    const long = adapters
      .map((f) => `${f} (${readFileSync(path.join(ROOT, f), 'utf8').trimEnd().split('\n').length} lines)`)
      .filter((line) => Number(/\((\d+) lines\)/.exec(line)![1]) > MAX_ADAPTER_LINES);
    expect(long).toEqual([]);
    // Netlify finds its functions only in its own folders: what is
    // there only re-exports an adapter (and the portal's paths).
    for (const entry of sourceFiles('netlify'))
      expect(readFileSync(path.join(ROOT, entry), 'utf8')).toMatch(/export \{ default \} from '\.\.\/\.\.\/adapters\//);
  });

  it('lets only the tests import the spec oracle', () => {
    const files = ['src', 'adapters', 'lib', 'build', 'cli', 'netlify', 'test', 'bench'].flatMap(sourceFiles);
    const importers = files.filter((f) =>
      importsOf(f).some((spec) => spec.endsWith('/oracle.ts') || spec === './oracle.ts'),
    );
    expect(importers.length).toBeGreaterThan(2);
    expect(importers.filter((f) => !f.startsWith('test/'))).toEqual([]);
  });

  it("has no import cycle among the project's own files", () => {
    const files = ['src', 'lib', 'build', 'cli', 'netlify', 'adapters', 'bench'].flatMap(sourceFiles);
    expect(files.length).toBeGreaterThan(40);
    expect(importCycles(files)).toEqual([]);
  });

  it("loads no platform's package in src/: portable packages only, and node: modules only in *.node.ts files", () => {
    const files = sourceFiles('src');
    expect(files.length).toBeGreaterThan(30);
    expect(files.some((file) => importsOf(file).some((spec) => spec.startsWith('@noble/hashes')))).toBe(true);
    expect(platformImports(files)).toEqual([]);
  });

  it.each([
    ['src/keys/stores/blobs.ts', '@netlify/blobs', true],
    ['src/api/handler.ts', '@netlify/edge-functions', true],
    ['src/keys/stores/d1.ts', 'cloudflare:workers', true],
    ['src/keys/stores/d1.ts', '@cloudflare/workers-types', true],
    ['src/keys/stores/postgres.node.ts', 'pg', true],
    ['src/portal/mail.ts', 'nodemailer', true],
    ['src/keys/stores/sqlite.ts', 'node:sqlite', true],
    ['src/keys/stores/sqlite.node.ts', 'node:sqlite', false],
    ['src/store/refs.ts', '@noble/hashes/sha2.js', false],
    ['src/store/refs.ts', '../shared/types.ts', false],
  ])('in %s, an import of %s ties src/ to one platform: %s', (file, spec, ties) => {
    expect(tiesToPlatform(file, spec)).toBe(ties);
  });

  it('finds the platform packages of the stores that left src/, were they back in it', () => {
    expect(platformImports(['adapters/_netlify/blobs-keys.ts'])).toEqual([
      'adapters/_netlify/blobs-keys.ts: @netlify/blobs',
    ]);
    expect(platformImports(['adapters/_node/postgres-keys.ts'])).toEqual([
      'adapters/_node/postgres-keys.ts: node:crypto',
      'adapters/_node/postgres-keys.ts: pg',
    ]);
  });

  it("names no platform's shared-cache header or purge in src/: each adapter names its own", () => {
    const PLATFORM = /cdn-cache-control|cache-tag|xkey|ctx\.cache|purgeCache/i;
    const named = sourceFiles('src').flatMap((file) =>
      stringsOf(file)
        .filter((text) => PLATFORM.test(text))
        .map((text) => `${file}: '${text}'`),
    );
    expect(named).toEqual([]);
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines on the request path (src/, adapters/, netlify/)`, () => {
    expect(['src', 'adapters', 'netlify'].flatMap(sourceFiles).flatMap(longFunctions)).toEqual([]);
  });
});
