/**
 * `npm start`'s build step: builds dist/ when it is missing or stale, except
 * that a dist/ holding a real archive is served as it is when no source is
 * given (rebuilding it from the sample would silently lose data), and says
 * which archive it serves.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { BuildRefused } from './refused.ts';
import { changedInput, describeDist, readDist, staleness, type DistState } from './dist-state.ts';
import { resolveSource, ROOT } from './archive/source.ts';

/** How `npm run build` runs the build, from the project's folder (package.json's `build`; a test holds them together). */
export const BUILD_COMMAND = ['--no-turbofan', '--import', './lib/compile-cache.js', 'build/build.ts'];

/**
 * Builds `out` as `npm run build` does, in a Node process of its own: the
 * build runs without V8's optimizing compiler and with the compile cache on
 * (build/build.ts, lib/compile-cache.js), which a first build of the full
 * archive took about 2 s longer without, and the server that follows needs
 * that compiler. Its lines are this process's; a refusal comes back as
 * BuildRefused with its reason, any other failure as an error.
 */
async function buildApart(out: string): Promise<void> {
  const child = spawn(process.execPath, [...BUILD_COMMAND, '--out', out], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let refused: string | undefined;
  child.on('message', (message: { refused?: unknown }) => {
    if (typeof message?.refused === 'string') refused = message.refused;
  });
  const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
  if (refused !== undefined) throw new BuildRefused(refused);
  if (code !== 0) throw new Error(`the build failed (${signal ?? `exit code ${code}`}); it said why above`);
}

/** Makes dist/ current where it can; a refused build throws BuildRefused. */
export async function prepareDist(dist: string, log: (line: string) => void = console.log): Promise<DistState> {
  const held = await readDist(dist);
  const source = await resolveSource(undefined);
  let rebuilt = false;
  // A dist/ whose manifest is damaged cannot be served as it is: the
  // build below repairs it, or refuses to put the sample over it.
  if (held && !held.damaged && !held.source.sample && source.via === 'sample') {
    log(
      'no ARCHIVE_SOURCE and no data/cache/oscars.csv: serving dist/ as it is rather than rebuilding it from the sample',
    );
    const changed = await changedInput(held.builtMs);
    if (changed) log(`${changed}; set ARCHIVE_SOURCE=/path/to/oscars.csv to rebuild dist/ with it`);
  } else {
    const reason = await staleness(held, source);
    if (reason) {
      log(`building: ${reason}`);
      await buildApart(dist);
      rebuilt = true;
    }
  }
  const served = rebuilt ? (await readDist(dist))! : held!;
  log(`serving ${describeDist(served)}`);
  return served;
}
