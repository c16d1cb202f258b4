/**
 * What someone outside the project installs. A fresh clone installed for
 * production, exactly `npm ci --omit=dev && npm start` (no tools, no
 * TypeScript loader: Node 24 from the `node` dependency runs the scripts as
 * they are), builds and serves the full archive. The client package, packed
 * by `npm run pack:client` and installed from its tarball into a project of
 * its own, answers from that server under plain Node 24 and under Deno.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from '../helpers/http.ts';
import { DENO, FULL_SOURCE, ROOT } from '../helpers/paths.ts';
import { cleanCopy, tempDir } from '../helpers/temp.ts';
import { expected, type SpecArchive } from '../oracle.ts';
import { freeLoopbackPort } from '../../lib/ports.ts';

const run = promisify(execFile);
const NODE_24 = path.join(ROOT, 'node_modules/.bin/node');

/**
 * The environment of a user's shell: none of the npm variables of the `npm
 * test` this runs under, and nothing of this checkout's node_modules on PATH,
 * so a clone that lacks a tool cannot borrow ours.
 */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (!/^npm_/i.test(name) && name !== 'ARCHIVE_SOURCE') env[name] = value;
  env.PATH = (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => !path.resolve(dir).startsWith(path.join(ROOT, 'node_modules')))
    .join(path.delimiter);
  // The registry's packages come from npm's cache when it has them, so this runs offline as well.
  return { ...env, npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', ...extra };
}

let clone: string;
let server: ChildProcess;
let output = '';
let port: number;
let key: string;
let archive: SpecArchive;

beforeAll(async () => {
  clone = await cleanCopy('production', 'none');
  port = await freeLoopbackPort();
  server = spawn('sh', ['-c', 'npm ci --omit=dev && npm start'], {
    cwd: clone,
    env: userEnv({ ARCHIVE_SOURCE: FULL_SOURCE, PORT: String(port) }),
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so that stopping it stops npm and the server npm runs.
    detached: true,
  });
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (/development key: .*\n/.test(output)) resolve();
    };
    server.stdout!.on('data', onData);
    server.stderr!.on('data', onData);
    server.once('exit', (code) => reject(new Error(`npm ci --omit=dev && npm start exited ${code}:\n${output}`)));
  });
  key = readFileSync(path.join(clone, 'data/dev-key.txt'), 'utf8').trim();
  const whole = await rawRequest(port, 'GET', `/archive/apikey=${key}`);
  archive = JSON.parse(whole.body.toString('utf8'));
}, 600_000);

afterAll(async () => {
  if (!server?.pid || server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise((resolve) => server.once('exit', resolve));
  process.kill(-server.pid, 'SIGTERM');
  await exited;
});

describe('a fresh clone installed with npm ci --omit=dev && npm start', () => {
  it('installs no development tool: no TypeScript loader, no test runner', () => {
    const installed = readdirSync(path.join(clone, 'node_modules'));
    expect(installed).toContain('node');
    for (const tool of ['tsx', 'vitest', 'deno', 'netlify-cli', 'playwright-core'])
      expect(installed).not.toContain(tool);
  });

  it('builds and serves the full archive on Node 24, answering /archive/year=2026 with the development key', async () => {
    expect(output).toContain('building: dist/ is missing');
    expect(output).toMatch(/serving the full archive, revision \w+ \(12137 nominations; 97 ceremony years, 1929-2026/);
    expect(existsSync(path.join(clone, 'node_modules/.bin/node'))).toBe(true);
    expect((await run(path.join(clone, 'node_modules/.bin/node'), ['--version'])).stdout).toMatch(/^v24\./);
    const reply = await rawRequest(port, 'GET', `/archive/year=2026/apikey=${key}`);
    expect({ status: reply.status, text: reply.body.toString('utf8') }).toEqual(expected.ceremonyByYear(archive, 2026));
  });
});

describe('the client package', () => {
  let tarball: string;
  let project: string;
  /** One line of a user's program: Meryl Streep's nominations, through the installed package. */
  const ONE_LINE =
    "import { createClient } from 'film-awards-archive-client'; " +
    "console.log(JSON.stringify(await createClient({ baseUrl: process.env.FAA_BASE, apiKey: process.env.FAA_KEY }).person('Meryl Streep')));";

  beforeAll(async () => {
    const out = await tempDir('client-pack');
    const packed = await run('npm', ['run', '--silent', 'pack:client', '--', '--out', out], {
      cwd: ROOT,
      maxBuffer: 1 << 24,
    });
    tarball = packed.stdout.trim().split('\n').at(-1)!;
    project = await tempDir('client-project');
    await writeFile(path.join(project, 'package.json'), '{ "private": true, "type": "module" }\n');
    await run('npm', ['install', tarball], { cwd: project, env: userEnv() });
  }, 300_000);

  it('is written by npm run pack:client, which prints the tarball as its last line', () => {
    expect(path.basename(tarball)).toMatch(/^film-awards-archive-client-\d+\.\d+\.\d+\.tgz$/);
    expect(existsSync(tarball)).toBe(true);
  });

  it('ships JavaScript with type declarations, ESM, and depends on nothing', () => {
    const installed = path.join(project, 'node_modules/film-awards-archive-client');
    const manifest = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({
      name: 'film-awards-archive-client',
      type: 'module',
      exports: { '.': { types: './client.d.ts', default: './client.js' } },
    });
    expect(manifest.dependencies ?? {}).toEqual({});
    const files = readdirSync(installed);
    expect(files).toEqual(expect.arrayContaining(['client.js', 'client.d.ts', 'types.d.ts', 'LICENSE', 'README.md']));
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    // Nothing to resolve at run time, so a browser can load client.js as it is.
    expect(readFileSync(path.join(installed, 'client.js'), 'utf8')).not.toMatch(/^\s*import\s|\brequire\(|node:/m);
    expect(readdirSync(path.join(project, 'node_modules')).filter((f) => !f.startsWith('.'))).toEqual([
      'film-awards-archive-client',
    ]);
  });

  it('has a README whose example compiles under strict TypeScript and that names every method the client has', async () => {
    const installed = path.join(project, 'node_modules/film-awards-archive-client');
    const readme = readFileSync(path.join(installed, 'README.md'), 'utf8');
    const example = /```ts\n([\s\S]*?)```/.exec(readme)![1];
    await writeFile(path.join(project, 'example.ts'), example);
    const tsc = path.join(ROOT, 'node_modules/.bin/tsc');
    const args = [
      '--strict',
      '--noEmit',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--types',
      'node',
      '--typeRoots',
      path.join(ROOT, 'node_modules/@types'),
      'example.ts',
    ];
    const compiled = await run(tsc, args, { cwd: project }).then(
      () => 'compiles',
      (error: { stdout: string }) => error.stdout,
    );
    expect(compiled).toBe('compiles');
    const { stdout } = await run(
      NODE_24,
      [
        '--input-type=module',
        '-e',
        "import { createClient } from 'film-awards-archive-client'; const c = createClient({ baseUrl: 'http://x', apiKey: 'k' }); console.log(JSON.stringify(Object.keys(c)));",
      ],
      { cwd: project },
    );
    for (const method of JSON.parse(stdout) as string[]) expect(readme).toContain(`\`${method}`);
    expect(readme).toMatch(/1929 to 2026/);
  });

  it("lists Meryl Streep's 21 nominations under plain Node 24, from one line of code", async () => {
    const { stdout } = await run(NODE_24, ['--input-type=module', '-e', ONE_LINE], {
      cwd: project,
      env: userEnv({ FAA_BASE: `http://127.0.0.1:${port}`, FAA_KEY: key }),
    });
    const nominations = JSON.parse(stdout);
    expect(nominations).toEqual(JSON.parse(expected.personByName(archive, 'Meryl Streep').text));
    expect(nominations).toHaveLength(21);
  });

  it('imports and answers under Deno, from the same node_modules', async () => {
    const { stdout } = await run(DENO, ['eval', ONE_LINE], {
      cwd: project,
      env: userEnv({ FAA_BASE: `http://127.0.0.1:${port}`, FAA_KEY: key, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' }),
    });
    expect(JSON.parse(stdout)).toEqual(JSON.parse(expected.personByName(archive, 'Meryl Streep').text));
  });
});
