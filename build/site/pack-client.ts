/**
 * npm run pack:client: the typed client (src/client/client.ts) as a package anyone
 * can install, `film-awards-archive-client`. It is checked and declared by
 * TypeScript and bundled by esbuild into one minified ES2022 file with what
 * it imports of src/shared/ (the service's own search among it), because
 * Node refuses to strip types under node_modules and browsers run no
 * TypeScript; it has no dependencies, so the same file loads in Node, Deno
 * and browsers, and a source map gives the TypeScript back to a debugger. The package is written
 * to OUT/package, packed there by `npm pack`, and the tarball's path is the
 * last line printed, so a script can hand it to `npm install`.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { CompilerOptions } from 'typescript';
import { build } from 'esbuild';
import { commandLine, refuser } from '../../lib/command-line.ts';
import { API_VERSION } from './openapi.ts';
import { createClient } from '../../src/client/client.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** The client's name on a registry: what it is (a client), for which service; the service itself is never installed. */
export const CLIENT_PACKAGE = 'film-awards-archive-client';
const ENTRY = path.join(ROOT, 'src/client/client.ts');

const USAGE = `usage: npm run pack:client -- [--out DIR]

Compiles src/client/client.ts to JavaScript with type declarations into DIR/package
as the package ${CLIENT_PACKAGE} (ESM, no dependencies: Node 24, Deno,
browsers), packs it with npm pack into DIR and prints the tarball's path as
the last line. Install it anywhere with npm install <that path>.

  --out DIR   where the package and tarball go (default: client-package/)
  -h, --help  this text`;

type TypeScript = typeof import('typescript');
const NO_TYPESCRIPT = 'TypeScript is not installed (a development dependency): run npm ci, without --omit=dev';

/**
 * The TypeScript compiler, loaded only to compile the client (the
 * build and the server never need it); null when it is not installed.
 */
async function typescript(): Promise<TypeScript | null> {
  try {
    return (await import('typescript')).default;
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND') return null;
    throw error;
  }
}

/**
 * Checks the client and declares it and the shapes it names; bundles it;
 * throws with TypeScript's messages if anything does not compile.
 */
async function compile(ts: TypeScript, outDir: string): Promise<void> {
  const options: CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    types: [],
    strict: true,
    declaration: true,
    // `./types.ts` in the source is `./types.js` in what ships.
    rewriteRelativeImportExtensions: true,
    allowImportingTsExtensions: false,
    outDir,
    rootDir: path.join(ROOT, 'src'),
    newLine: ts.NewLineKind.LineFeed,
  };
  // The declarations keep the comments, where editors read them.
  const declarations = ts.createProgram([ENTRY], { ...options, emitDeclarationOnly: true });
  const emitted = declarations.emit();
  const problems = [...ts.getPreEmitDiagnostics(declarations), ...emitted.diagnostics];
  if (problems.length > 0) {
    throw new Error(
      ts.formatDiagnostics(problems, {
        getCanonicalFileName: (f) => f,
        getCurrentDirectory: () => ROOT,
        getNewLine: () => '\n',
      }),
    );
  }
  // The JavaScript a browser loads, in one file: minified, its names and the TypeScript in the source map.
  await build({
    entryPoints: [ENTRY],
    outfile: path.join(outDir, 'client.js'),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    minify: true,
    sourcemap: 'external',
    legalComments: 'none',
    logLevel: 'silent',
  });
}

/**
 * The modules of src/shared/ whose declarations the client's name (its
 * shapes: client.js holds all the code it runs), shipped beside it.
 */
const SHARED = ['types'];

/**
 * What ships is flat: the compiler declares src/'s folders (client/client.d.ts,
 * shared/types.d.ts), the package holds them side by side, the client naming
 * `./types.js` (declarations keep the source's `.ts` specifiers); the source
 * map names the sources as the repository does (`src/client/client.ts`).
 */
async function flatten(dir: string): Promise<void> {
  const mapFile = path.join(dir, 'client.js.map');
  const map = JSON.parse(await readFile(mapFile, 'utf8')) as { sources: string[] };
  map.sources = map.sources.map((source) => path.relative(ROOT, path.resolve(dir, source)).split(path.sep).join('/'));
  await writeFile(mapFile, JSON.stringify(map));
  const moves = [['client/client', 'client'], ...SHARED.map((name) => [`shared/${name}`, name])];
  for (const [from, to] of moves) {
    for (const ext of ['.d.ts']) {
      const text = await readFile(path.join(dir, `${from}${ext}`), 'utf8');
      await writeFile(
        path.join(dir, `${to}${ext}`),
        text
          .replace(/(from\s+["'])\.\.\/shared\/([\w-]+)\.[jt]s(["'])/g, '$1./$2.js$3')
          .replace(/(from\s+["']\.\/[\w-]+)\.ts(["'])/g, '$1.js$2'),
      );
    }
  }
  for (const folder of new Set(moves.map(([from]) => from.split('/')[0])))
    await rm(path.join(dir, folder), { recursive: true });
}

/** The client's methods, named as `createClient` returns them (a method added there is listed here without an edit). */
function methodNames(): string[] {
  const client = createClient({ baseUrl: 'http://localhost', apiKey: 'x' }) as unknown as Record<string, unknown>;
  return Object.keys(client).filter((name) => typeof client[name] === 'function' && name !== 'clearCache');
}

/**
 * The years the pinned revision holds (data/archive-summary.json, which the build's guard checks every build against).
 */
function yearRange(): [string, string] {
  const years = Object.keys(
    JSON.parse(readFileSync(path.join(ROOT, 'data/archive-summary.json'), 'utf8')) as Record<string, unknown>,
  ).sort();
  return [years[0], years[years.length - 1]];
}

/** The package's README; its example compiles under `strict` (test/ops/install.test.ts checks it with tsc). */
export function packageReadme(): string {
  const [first, last] = yearRange();
  return `# ${CLIENT_PACKAGE}

A typed client for the Film Awards Archive API: every Academy Awards
nomination and winner, ${first} to ${last}. ESM, no dependencies; Node 24, Deno and
browsers. It caches answers with their ETags, waits out Retry-After on 429,
backs off on 500, and never puts the key in an error.

\`\`\`ts
import { createClient } from '${CLIENT_PACKAGE}';

const apiKey = process.env.FAA_KEY;
if (!apiKey) throw new Error("Set FAA_KEY to your API key (sign in at the service's /portal to get one)");
const api = createClient({ baseUrl: 'http://127.0.0.1:8888', apiKey });
for (const { year, category, nomination } of await api.person('Meryl Streep')) {
  console.log(year, category, nomination.secondary?.join(', ') ?? '', nomination.won ? 'won' : '');
}
\`\`\`

Methods, each typed in \`client.d.ts\`:
${methodNames()
  .map((name) => `- \`${name}\``)
  .join('\n')}
- \`clearCache()\` forgets every answer it keeps.

Failures are \`ApiError\` (\`status\`, \`message\`, \`path\` with the key masked,
\`retryAfter\`).

## Offline: your own copy

\`createOfflineClient\` downloads the service's dataset once (\`oscars.ndjson\`
and the search index \`search.ndjson\`, each checked against the sha256 its
list gives) and then answers every lookup above, \`search\` included, from
memory, with no key and no network, byte for byte as the service would (its
errors too: status, message and \`path\`). Give it a
\`store\` to keep the copy between runs (a file in Node or Deno, IndexedDB in a
browser). The copy is hashed whenever it is loaded and on \`update()\`: one that
no longer matches its sha256 (edited, cut short) or that cannot be read counts
as none, and is downloaded again. \`update()\` takes a new copy only when the
service has one (its list's sha256, then \`If-None-Match\`).

\`\`\`js
import { readFile, rename, writeFile } from 'node:fs/promises';
import { createOfflineClient } from '${CLIENT_PACKAGE}';

const file = 'oscars-dataset.json';
const store = {
  read: () => readFile(file, 'utf8').then(JSON.parse), // missing or damaged: the client downloads a new copy
  // Written whole or not at all: a copy cut off mid-write never replaces the last good one.
  write: async (held) => {
    await writeFile(\`\${file}.tmp\`, JSON.stringify(held));
    await rename(\`\${file}.tmp\`, file);
  },
};
const api = await createOfflineClient({ baseUrl: 'http://127.0.0.1:8888', apiKey: process.env.FAA_KEY, store });
console.log((await api.titleById('tt0120338')).length); // 14, from memory
await api.update(); // once a year is plenty
\`\`\`

With no network at all (a CI job, a laptop on a plane), seed it from the
files downloaded elsewhere with \`curl -o oscars.ndjson "$BASE/dataset/file=oscars.ndjson/apikey=$KEY"\`
(and \`search.ndjson\` alike) and the \`sha256\` that \`/dataset\`'s list gives for each.
The seed is used when the store holds no good copy, checked against those sha256s,
and kept in the store; seeded without \`search\`, every lookup but search answers
until \`update()\` takes the index:

\`\`\`js
const seed = {
  text: await readFile('oscars.ndjson'),
  sha256: process.env.OSCARS_NDJSON_SHA256,
  search: { text: await readFile('search.ndjson'), sha256: process.env.SEARCH_NDJSON_SHA256 },
};
const api = await createOfflineClient({ baseUrl: 'http://127.0.0.1:8888', apiKey: process.env.FAA_KEY, store, seed });
\`\`\`
`;
}

/** The package's own package.json: no dependencies, one ESM entry with its types. */
async function manifest(): Promise<Record<string, unknown>> {
  const root = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { license: string };
  return {
    name: CLIENT_PACKAGE,
    version: API_VERSION,
    description:
      'Typed client for the Film Awards Archive API (every Academy Awards nomination and winner): ESM, no dependencies, for Node, Deno and browsers.',
    type: 'module',
    license: root.license,
    exports: { '.': { types: './client.d.ts', default: './client.js' }, './package.json': './package.json' },
    main: './client.js',
    types: './client.d.ts',
    sideEffects: false,
    files: [
      'client.js',
      'client.js.map',
      'client.d.ts',
      ...SHARED.map((name) => `${name}.d.ts`),
      'README.md',
      'LICENSE',
    ],
  };
}

/** Writes OUT/package and packs it; resolves to the tarball's path. */
export async function packClient(out: string): Promise<string> {
  const dir = path.join(out, 'package');
  const ts = await typescript();
  if (!ts) throw new Error(`pack:client: ${NO_TYPESCRIPT}`);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await compile(ts, dir);
  await flatten(dir);
  await writeFile(path.join(dir, 'package.json'), `${JSON.stringify(await manifest(), null, 2)}\n`);
  await writeFile(path.join(dir, 'README.md'), packageReadme());
  await copyFile(path.join(ROOT, 'LICENSE'), path.join(dir, 'LICENSE'));
  // npm run sets npm_execpath to the npm that runs us; outside npm, the one on PATH.
  const npm = process.env.npm_execpath
    ? ([process.execPath, [process.env.npm_execpath]] as const)
    : (['npm', []] as const);
  const { stdout } = await promisify(execFile)(
    npm[0],
    [...npm[1], 'pack', '--silent', '--pack-destination', path.resolve(out)],
    { cwd: dir },
  );
  return path.resolve(out, stdout.trim().split('\n').at(-1)!);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const { values } = commandLine({ name: 'pack:client', usage: USAGE, options: { out: { type: 'string' } } });
  if (!(await typescript())) refuser('pack:client')(NO_TYPESCRIPT);
  console.log(await packClient(path.resolve(values.out ?? path.join(ROOT, 'client-package'))));
}
