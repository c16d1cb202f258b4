/**
 * npm run check:netlify: Netlify's own build, offline (`netlify build
 * --offline`), as a deploy runs it: the build command of netlify.toml (the
 * pinned archive, the build, the check that every stored file is there and
 * whole), the edge function's bundle and the portal function. Its output is
 * passed on but for one block netlify-cli prints in red offline: it cannot
 * fetch the inline-config helper of edge functions from edge.netlify.com, and
 * ours declares its paths in netlify.toml, which the bundle is routed by.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { commandLine } from '../lib/command-line.ts';
import { ROOT } from './lib/paths.ts';

const USAGE = `usage: npm run check:netlify

Runs Netlify's build on this machine, offline, as a deploy would: the build
command in netlify.toml (npm run data:fetch, npm run build, and the check that
every stored file of dist/ is there and holds the bytes its name promises),
then the edge function's bundle and the portal function's, into .netlify/.
Nothing is uploaded. Exit 0 when all of it succeeded. Set ARCHIVE_SOURCE, or
run npm run data:fetch online first, for the archive.

One message of netlify-cli is left out, with a line saying so: offline it
cannot fetch https://edge.netlify.com/bootstrap/globals/types.ts, which it
reads an edge function's inline config with; this project's edge function
declares its paths in netlify.toml instead, so nothing is lost.

Deploy afterwards with: npx netlify deploy --build --prod

Options:
  -h, --help   this text`;

/** Where the harmless block starts, and a line that proves it is that block and not another failure. */
const BLOCK_START = /^Could not load configuration for edge function at /;
const BLOCK_PROOF = "Import 'https://edge.netlify.com/bootstrap/globals/types.ts' failed";
/** Its last line. */
const BLOCK_END = /^\s*0: <unknown>\s*$/;

commandLine({ name: 'check:netlify', usage: USAGE, options: {} });

const child = spawn(process.execPath, [path.join(ROOT, 'node_modules/netlify-cli/bin/run.js'), 'build', '--offline'], {
  cwd: ROOT,
  // The project's deno bundles the edge function; netlify-cli finds it on PATH.
  env: {
    ...process.env,
    PATH: [path.join(ROOT, 'node_modules/.bin'), path.dirname(process.execPath), process.env.PATH].join(path.delimiter),
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});

/** Passes lines on, holding back a block that starts as the harmless one until it is known to be that one. */
function passOn(stream: NodeJS.ReadableStream, write: (line: string) => void): Promise<void> {
  let held: string[] | null = null;
  const lines = createInterface({ input: stream });
  lines.on('line', (line) => {
    if (held === null && BLOCK_START.test(line)) held = [line];
    else if (held !== null) {
      held.push(line);
      if (BLOCK_END.test(line) || held.length > 20) {
        if (held.some((l) => l.includes(BLOCK_PROOF)))
          write(
            "(offline: netlify-cli could not fetch the edge functions' inline-config helper from edge.netlify.com; the paths come from netlify.toml, so nothing is lost)",
          );
        else held.forEach(write);
        held = null;
      }
    } else write(line);
  });
  return new Promise((resolve) =>
    lines.once('close', () => {
      held?.forEach(write);
      resolve();
    }),
  );
}

const done = Promise.all([
  passOn(child.stdout!, (l) => console.log(l)),
  passOn(child.stderr!, (l) => console.error(l)),
]);
const code = await new Promise<number>((resolve) => child.once('exit', (c) => resolve(c ?? 1)));
await done;
console.log(
  code === 0
    ? 'check:netlify: the build, its stored files, the edge function and the portal function are ready in dist/ and .netlify/'
    : `check:netlify: netlify build failed (exit ${code})`,
);
process.exit(code);
