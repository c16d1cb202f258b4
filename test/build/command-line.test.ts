/**
 * The one command-line reader every npm script uses, and every real script
 * through it: --help prints the usage and exits 0, an unknown option is one
 * line and exit 2, and neither does any of the command's work.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readCommandLine } from '../../lib/command-line.ts';
import { ROOT } from '../helpers/paths.ts';
import { cleanCopy, tempDir } from '../helpers/temp.ts';
import { freeLoopbackPort } from '../../lib/ports.ts';

const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

const spec = {
  name: 'demo',
  usage: 'usage: npm run demo -- [--source PATH] [--force]\n\nDoes a demo.\n',
  options: { source: { type: 'string' }, force: { type: 'boolean', default: false } },
  positionals: 1,
} as const;

describe('a command line', () => {
  it('answers --help and -h with the usage and exit 0, whatever else is on the line', () => {
    for (const argv of [['--help'], ['-h'], ['--source', 'x', '--help'], ['--help', '--unknown']]) {
      expect(readCommandLine(spec, argv)).toEqual({ exit: 0, text: spec.usage.trimEnd() });
    }
  });

  it('refuses an unknown option in one line that names the command and the option, exit 2', () => {
    const line = readCommandLine(spec, ['--sauce', 'x']);
    expect(line).toEqual({ exit: 2, text: expect.stringMatching(/^demo: Unknown option '--sauce'; see --help$/) });
  });

  it('refuses an option without its value and a second positional argument, each in one line', () => {
    expect(readCommandLine(spec, ['--source'])).toMatchObject({
      exit: 2,
      text: expect.stringMatching(/^demo: .*--source.*; see --help$/),
    });
    expect(readCommandLine(spec, ['a', 'b'])).toEqual({ exit: 2, text: "demo: unexpected argument 'b'; see --help" });
    expect(readCommandLine({ ...spec, positionals: 0 }, ['a'])).toEqual({
      exit: 2,
      text: "demo: unexpected argument 'a'; see --help",
    });
  });

  it('gives the values and positionals of a good line, defaults filled in', () => {
    expect(readCommandLine(spec, ['--source', 'in.csv', 'extra'])).toEqual({
      values: { source: 'in.csv', force: false },
      positionals: ['extra'],
    });
  });
});

/**
 * Every file of a folder but node_modules, relative: what a command that did
 * no work leaves as it found it. Walked by hand: a recursive readdir follows
 * the clone's node_modules symlink into 50,000 entries (2.6 s under load),
 * and this ran twice for each of the 40 commands.
 */
function filesOf(dir: string, under = ''): string[] {
  return readdirSync(path.join(dir, under), { withFileTypes: true })
    .filter((entry) => !(under === '' && entry.name === 'node_modules'))
    .flatMap((entry) => {
      const file = path.join(under, entry.name);
      return entry.isDirectory() ? filesOf(dir, file) : [file];
    })
    .sort();
}

/** Whether anything accepts connections on the port. */
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

describe('every npm script', () => {
  // Every script of ours (the ones that run a file of this repository on
  // node, `exec` or not), so a command added later is held to this too.
  const scripts = Object.entries(pkg.scripts as Record<string, string>)
    .filter(([, line]) => /^(?:exec )?node /.test(line))
    .map(([name]) => name);
  let clone: string;
  beforeAll(async () => {
    clone = await cleanCopy('commands');
  });

  /** `npm run --silent <script> -- <args>` in the fresh clone, with its own empty temp folder and a port of its own. */
  async function npmRun(script: string, args: string[]) {
    const tmp = await tempDir('command-tmp');
    const port = await freeLoopbackPort();
    const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp, PORT: String(port) };
    delete env.ARCHIVE_SOURCE;
    const before = filesOf(clone);
    const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        'npm',
        ['run', '--silent', script, '--', ...args],
        { cwd: clone, env, timeout: 60_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? Number(error.code) : 0, stdout, stderr: stderr.replace(/^npm warn .*\n/gm, '') }),
      ),
    );
    // No work: no dist/, no download into data/cache/, no key
    // database, no tarball, nothing in its temp folder, no server.
    expect({ script, args, files: filesOf(clone) }).toEqual({ script, args, files: before });
    // (npm itself keeps Node's compile cache there.)
    expect(readdirSync(tmp).filter((entry) => entry !== 'node-compile-cache')).toEqual([]);
    expect(await listening(port)).toBe(false);
    return result;
  }

  it('holds every script of ours to this, those named in the README among them', () => {
    expect(scripts).toEqual(
      expect.arrayContaining([
        'start',
        'build',
        'data:fetch',
        'data:update',
        'keys',
        'bench',
        'bench:keys',
        'pack:client',
        'dev:netlify',
      ]),
    );
  });

  it.each(scripts)('%s answers --help with its usage on stdout and exit 0, doing nothing else', async (script) => {
    const { code, stdout, stderr } = await npmRun(script, ['--help']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(new RegExp(`^usage: npm (start|run (--silent )?${script})\\b`));
    expect(stdout.split('\n').length).toBeGreaterThan(3);
  });

  it.each(scripts)(
    '%s refuses an unknown option in one line on stderr and exit 2, doing nothing else',
    async (script) => {
      const { code, stdout, stderr } = await npmRun(script, ['--frobnicate']);
      expect({ code, stdout, stderr }).toEqual({
        code: 2,
        stdout: '',
        stderr: `${script}: Unknown option '--frobnicate'; see --help\n`,
      });
    },
  );
});
