/**
 * What data:update and data:fetch take from outside, bounded and checked: a
 * revision past the size limit (from a file, /dev/zero, a URL or GitHub's
 * API, answering without end) or the time limit stops them with exit 2 and
 * one line, in little memory; a revision repeating rows is refused naming
 * them; text from a revision cannot become markup in the report or
 * CHANGELOG.md; and an update that lacks the pinned revision says so and how
 * to get it. Revisions are made from the real file at test time.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants, readFileSync } from 'node:fs';
import { copyFile, mkdir, open, readFile, truncate, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { update, type UpdateOptions } from '../../build/update/update.ts';
import { FULL_SOURCE, ROOT } from '../helpers/paths.ts';
import { tempDir } from '../helpers/temp.ts';

const run = promisify(execFile);
const sha256 = (bytes: string | Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const real = readFileSync(FULL_SOURCE, 'utf8');
const [header, ...rows] = real.slice(0, -1).split('\n');
const file = (lines: string[]) => `${[header, ...lines].join('\n')}\n`;
const withName = (row: string, name: string) => {
  const f = row.split('\t');
  f[7] = name;
  f[8] = name;
  f[9] = '';
  return f.join('\t');
};

/** Names with every kind of markup and control an upstream mistake (or a hostile pull request) could bring. */
const HOSTILE_NAMES = [
  '<img src=x onerror=alert(1)> [click me](http://evil.example/x)',
  '<script>alert(1)</script> Bell\u0007 and Esc\u001b[2J',
  'Right\u202eto left **bold** _it_ `code` ~~gone~~ # http://evil.example/bare',
];
const last = rows.filter((r) => r.startsWith('98\t'));
const REVISIONS: Record<string, string> = {
  '/repeats.csv': file([...rows, ...rows.slice(100, 150)]),
  '/markup.csv': file([...rows, ...HOSTILE_NAMES.map((name, i) => withName(last[i], name))]),
};

let server: http.Server;
let base: string;
/** Bytes each endless answer sent before its reader hung up. */
const sent: number[] = [];

/** Answers without end, in 64 KiB chunks, until the client goes away (or, should it never, after 512 MiB). */
function endless(res: http.ServerResponse, chunk: Buffer) {
  let total = 0;
  const more = () => {
    while (!res.destroyed && total < 512 * 1024 * 1024) {
      total += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', more);
    }
    sent.push(total);
    res.end();
  };
  res.once('close', () => sent.push(total));
  more();
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (url.pathname === '/endless.csv') return endless(res, Buffer.alloc(64 * 1024, 'a'));
    // GitHub's API answering a list of commits that never ends.
    if (url.pathname === '/api/repos/DLu/oscar_data/commits') {
      res.setHeader('content-type', 'application/json');
      res.write('[');
      return endless(res, Buffer.from(`${JSON.stringify({ sha: 'f'.repeat(40), padding: 'x'.repeat(60_000) })},`));
    }
    // An answer that trickles a byte at a time and never ends, under any
    // size limit (it stops once the reader is gone, or after 10 minutes).
    if (url.pathname === '/trickle.csv') {
      res.write(header);
      let left = 6000;
      const timer = setInterval(
        () => (res.destroyed || --left < 0 ? (clearInterval(timer), res.end()) : res.write('a')),
        100,
      );
      return;
    }
    // GitHub's API naming a commit whose date is markup, then its file.
    if (url.pathname === '/dated/repos/DLu/oscar_data/commits')
      return res.end(
        JSON.stringify([{ sha: 'b'.repeat(40), commit: { committer: { date: '<img src=x onerror=alert(1)>' } } }]),
      );
    if (url.pathname === '/dated/repos/DLu/oscar_data/contents/oscars.csv') return res.end(REVISIONS['/markup.csv']);
    const body = REVISIONS[url.pathname];
    res.statusCode = body ? 200 : 404;
    res.end(body ?? 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A temp checkout pinned to the real file; without its cached copy when `cached` is false. */
async function checkout({ cached = true, url }: { cached?: boolean; url?: string } = {}): Promise<string> {
  const root = await tempDir('update-limits');
  await mkdir(path.join(root, 'data/cache'), { recursive: true });
  const committed = JSON.parse(await readFile(path.join(ROOT, 'data/source.json'), 'utf8'));
  await writeFile(
    path.join(root, 'data/source.json'),
    JSON.stringify({ ...committed, ...(url ? { url } : {}) }, null, 2),
  );
  if (cached) await copyFile(FULL_SOURCE, path.join(root, 'data/cache/oscars.csv'));
  await copyFile(path.join(ROOT, 'data/archive-summary.json'), path.join(root, 'data/archive-summary.json'));
  await writeFile(path.join(root, 'CHANGELOG.md'), '# Changelog\n\n## [Unreleased]\n');
  return root;
}

const snapshot = async (root: string) =>
  Promise.all(
    ['data/source.json', 'data/archive-summary.json', 'CHANGELOG.md'].map((f) => readFile(path.join(root, f), 'utf8')),
  );

async function updateIn(root: string, options: UpdateOptions = {}) {
  const printed: string[] = [];
  const result = await update({
    root,
    env: {},
    log: (l) => printed.push(l),
    warn: () => {},
    timeoutMs: 20_000,
    ...options,
  });
  return { ...result, printed: printed.join('\n') };
}

/** A command run to its end under Node 24, with the most memory it held (maxRSS, in MiB). */
async function measured(script: string, args: string[], env: Record<string, string> = {}) {
  // The script runs itself, as npm runs it (its argv[1] is its own file); the most memory it held is told on exit.
  const code = `
    process.on('exit', () => console.error('MAXRSS ' + Math.round(process.resourceUsage().maxRSS / 1024)));
    process.argv = [process.argv[0], ${JSON.stringify(path.join(ROOT, script))}, ...${JSON.stringify(args)}];
    await import(${JSON.stringify(path.join(ROOT, script))});`;
  const out = await run(process.execPath, ['--input-type=module', '-e', code], {
    cwd: ROOT,
    env: { ...process.env, ARCHIVE_SOURCE: '', ...env },
    timeout: 60_000,
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
  const maxRss = Number(/MAXRSS (\d+)/.exec(out.stderr)?.[1]);
  const lines = out.stderr.split('\n').filter((l) => l && !l.startsWith('MAXRSS'));
  return { code: out.code, lines, maxRss, stdout: out.stdout };
}

describe('a revision past the size limit', () => {
  it('from /dev/zero: data:update stops with exit 2 and one line, in less than 200 MiB', async () => {
    const root = await checkout();
    const out = await measured('build/update/update.ts', ['--root', root, '--from', '/dev/zero']);
    expect(out.code).toBe(2);
    expect(out.lines).toEqual([
      expect.stringMatching(
        /^data:update: --from \/dev\/zero is larger than 20 MB \(20971520 bytes\); nothing written\. If a revision really is that large, set DATA_MAX_BYTES higher \(or pass --max-bytes\)$/,
      ),
    ]);
    expect(out.maxRss).toBeLessThan(200);
  });

  it('from a 200 MB file, refused at once, the pin unchanged; the limit is settable', async () => {
    const root = await checkout();
    const big = path.join(root, 'big.csv');
    await writeFile(big, '');
    await truncate(big, 200 * 1024 * 1024);
    const before = await snapshot(root);
    await expect(updateIn(root, { from: big })).rejects.toThrow(/big\.csv is larger than 20 MB/);
    // A revision just over a lower limit is refused, under it taken.
    await expect(updateIn(root, { from: `${base}/markup.csv`, maxBytes: 1_000_000 })).rejects.toThrow(
      /markup\.csv is larger than 1000000 bytes: its answer says \d+ bytes; nothing written/,
    );
    expect(await snapshot(root)).toEqual(before);
  });

  it('from a URL answering without end: stops near the limit, and the server sees it hang up', async () => {
    const root = await checkout();
    sent.length = 0;
    const out = await measured('build/update/update.ts', ['--root', root, '--from', `${base}/endless.csv`]);
    expect(out.code).toBe(2);
    expect(out.lines).toEqual([
      expect.stringMatching(/^data:update: the new revision at .*endless\.csv is larger than 20 MB/),
    ]);
    expect(out.maxRss).toBeLessThan(200);
    await expect.poll(() => sent.length).toBeGreaterThan(0);
    expect(Math.max(...sent)).toBeLessThan(200 * 1024 * 1024);
  });

  it("from GitHub's API answering without end: stops at 1 MB of it", async () => {
    const root = await checkout();
    await expect(updateIn(root, { env: { GITHUB_API_URL: `${base}/api` } })).rejects.toThrow(
      /^the newest revision of oscars\.csv at .* is larger than 1 MB \(1048576 bytes\); nothing written$/,
    );
  });

  it('has an upper bound: --max-bytes or DATA_MAX_BYTES above 1 GB is refused with one line and exit 2, before anything is read', async () => {
    const root = await checkout();
    const before = await snapshot(root);
    const over = String(1024 ** 3 + 1);
    for (const args of [
      ['--max-bytes', over],
      ['--max-bytes', '1e15'],
    ]) {
      const out = await measured('build/update/update.ts', ['--root', root, '--from', '/dev/null', ...args]);
      expect([out.code, out.lines]).toEqual([
        2,
        [
          `data:update: --max-bytes must be a whole number of bytes from 1 to 1073741824 (1 GB), found ${JSON.stringify(args[1])}; see --help`,
        ],
      ]);
    }
    const setting = await measured('build/update/update.ts', ['--root', root, '--from', '/dev/null'], {
      DATA_MAX_BYTES: over,
    });
    expect([setting.code, setting.lines]).toEqual([
      2,
      [`data:update: Expected DATA_MAX_BYTES to be a whole number from 1 to 1073741824, got "${over}"`],
    ]);
    const fetched = await measured('build/update/fetch-data.ts', [], {
      ARCHIVE_SOURCE: '/dev/null',
      DATA_MAX_BYTES: over,
    });
    expect([fetched.code, fetched.lines]).toEqual([
      2,
      [`data:fetch: Expected DATA_MAX_BYTES to be a whole number from 1 to 1073741824, got "${over}"`],
    ]);
    // The bound itself is taken.
    const at = await measured('build/update/update.ts', [
      '--root',
      root,
      '--from',
      '/dev/null',
      '--max-bytes',
      String(1024 ** 3),
    ]);
    expect(at.lines.join('\n')).not.toContain('--max-bytes');
    expect(await snapshot(root)).toEqual(before);
  });

  it('for data:fetch: exit 2 and one line, from ARCHIVE_SOURCE or with DATA_MAX_BYTES below the pinned file', async () => {
    const zero = await measured('build/update/fetch-data.ts', [], { ARCHIVE_SOURCE: '/dev/zero' });
    expect([zero.code, zero.lines]).toEqual([
      2,
      [expect.stringMatching(/^data:fetch: ARCHIVE_SOURCE \(\/dev\/zero\) is larger than 20 MB/)],
    ]);
    expect(zero.maxRss).toBeLessThan(200);
    const low = await measured('build/update/fetch-data.ts', [], {
      ARCHIVE_SOURCE: FULL_SOURCE,
      DATA_MAX_BYTES: '1000',
    });
    expect([low.code, low.lines]).toEqual([
      2,
      [
        expect.stringMatching(
          /is larger than 1000 bytes; nothing written\. If a revision really is that large, set DATA_MAX_BYTES higher$/,
        ),
      ],
    ]);
  });
});

describe('a revision past the time limit', () => {
  it('from a named pipe nobody closes: data:update stops with exit 2 and one line, and ends', async () => {
    const root = await checkout();
    const fifo = path.join(root, 'revision.fifo');
    await run('mkfifo', [fifo]);
    // The test holds the pipe open for writing and writes nothing: a read of it never ends by itself.
    const writer = await open(fifo, constants.O_RDWR);
    try {
      const out = await measured('build/update/update.ts', ['--root', root, '--from', fifo, '--timeout', '1']);
      expect([out.code, out.lines]).toEqual([
        2,
        [`data:update: --from ${fifo} did not finish reading within 1 s; nothing written`],
      ]);
    } finally {
      await writer.close();
    }
  });

  it('from a URL that trickles without end under the size limit', async () => {
    const root = await checkout();
    const before = await snapshot(root);
    await expect(updateIn(root, { from: `${base}/trickle.csv`, timeoutMs: 1000 })).rejects.toThrow(
      /cannot download the new revision from .*trickle\.csv \(no whole answer within 1 s\); nothing written/,
    );
    expect(await snapshot(root)).toEqual(before);
  });
});

describe('a revision that repeats rows', () => {
  it('is refused, naming the repeated lines, never counted as new nominations', async () => {
    const root = await checkout();
    const before = await snapshot(root);
    const refused = updateIn(root, { from: `${base}/repeats.csv` });
    await expect(refused).rejects.toThrow(
      `repeats rows exactly: line ${rows.length + 2} repeats line 102, line ${rows.length + 3} repeats line 103, line ${rows.length + 4} repeats line 104, … (50 in all); nothing written`,
    );
    expect(await snapshot(root)).toEqual(before);
    // The real file repeats none.
    expect(new Set(rows).size).toBe(rows.length);
  });
});

describe('text from a revision in the report and CHANGELOG.md', () => {
  it('cannot become HTML, a link or Markdown, and control and bidirectional characters are shown as escapes', async () => {
    const root = await checkout();
    const reportFile = path.join(root, 'report.md');
    const result = await updateIn(root, { from: `${base}/markup.csv`, report: reportFile });
    expect(result.status).toBe('pinned');
    const changelog = await readFile(path.join(root, 'CHANGELOG.md'), 'utf8');
    const report = await readFile(reportFile, 'utf8');
    for (const text of [report, changelog]) {
      expect(text).toContain('nominations added: 3');
      for (const raw of [
        '<img',
        '<script',
        '](http',
        'http://evil',
        '**bold**',
        '`code`',
        '\u0007',
        '\u001b',
        '\u202e',
      ])
        expect(text).not.toContain(raw);
      expect(text).toContain('&lt;img src=x onerror=alert\\(1\\)&gt;');
      expect(text).toContain('\\[click me\\]\\(http&#58;//evil\\.example/x\\)');
      expect(text).toContain('Bell\\u\\{0007\\} and Esc\\u\\{001B\\}\\[2J');
      expect(text).toContain(
        'Right\\u\\{202E\\}to left \\*\\*bold\\*\\* \\_it\\_ \\`code\\` \\~\\~gone\\~\\~ \\# http&#58;//evil\\.example/bare',
      );
    }
    expect(await readFile(path.join(root, 'data/cache/oscars.csv'), 'utf8')).toBe(REVISIONS['/markup.csv']);
  });
});

describe('what else the update reads from outside', () => {
  it('a commit date from GitHub that is not a date never reaches the report', async () => {
    const root = await checkout();
    const reportFile = path.join(root, 'report.md');
    const result = await updateIn(root, { env: { GITHUB_API_URL: `${base}/dated` }, report: reportFile });
    expect(result.status).toBe('pinned');
    for (const text of [await readFile(reportFile, 'utf8'), await readFile(path.join(root, 'CHANGELOG.md'), 'utf8')])
      expect(text).not.toContain('<img');
    expect(JSON.parse(await readFile(path.join(root, 'data/source.json'), 'utf8'))).toMatchObject({
      commit: 'b'.repeat(40),
      date: null,
    });
  });

  it('ARCHIVE_SOURCE, checked after pinning, is read within the limit too (/dev/zero)', async () => {
    const root = await checkout();
    const out = await measured('build/update/update.ts', ['--root', root, '--from', `${base}/markup.csv`], {
      ARCHIVE_SOURCE: '/dev/zero',
    });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('data:update: ARCHIVE_SOURCE (/dev/zero) is not the new revision');
    // As much memory as the same update without ARCHIVE_SOURCE (two archives compared), give or take the 20 MB read.
    const plain = await measured('build/update/update.ts', [
      '--root',
      await checkout(),
      '--from',
      `${base}/markup.csv`,
    ]);
    expect(plain.code).toBe(0);
    console.log(`peak RSS: ${out.maxRss} MiB with ARCHIVE_SOURCE=/dev/zero, ${plain.maxRss} MiB without`);
    expect(out.maxRss).toBeLessThan(plain.maxRss + 100);
  });
});

describe('an update that lacks the pinned revision', () => {
  it('says exactly that, and how to get it, with --from and without', async () => {
    const root = await checkout({ cached: false, url: `${base}/gone.csv` });
    const lacking =
      /the pinned revision \(commit c5e9716b7e02, sha256 [0-9a-f]{12}\), which the new one is compared with, is not in data\/cache\/oscars\.csv and cannot be downloaded from .*gone\.csv \(HTTP 404\): run npm run data:fetch \(online\) to put it there, or set ARCHIVE_SOURCE=\/path\/to\/the pinned oscars\.csv, and run again; nothing written/;
    await expect(updateIn(root, { from: `${base}/markup.csv` })).rejects.toThrow(lacking);
    const out = await measured('build/update/update.ts', ['--root', root, '--from', `${base}/markup.csv`]);
    expect([out.code, out.lines]).toEqual([
      2,
      [expect.stringMatching(/^data:update: the pinned revision .*run npm run data:fetch/)],
    ]);
    // With the pinned file given, the same update goes through.
    const given = await updateIn(root, { from: `${base}/markup.csv`, env: { ARCHIVE_SOURCE: FULL_SOURCE } });
    expect(given.status).toBe('pinned');
    expect(sha256(await readFile(path.join(root, 'data/cache/oscars.csv')))).toBe(sha256(REVISIONS['/markup.csv']));
  });
});
