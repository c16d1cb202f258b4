/**
 * No log line holds a key, a sign-in token or a session: a real key, token and
 * session are sent 30 ways to a running `npm start` (the start script itself,
 * its pino logger writing to stdout), and every line it wrote is searched for
 * them, plain and percent-encoded. Also: the logger writes asynchronously.
 */
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/keys/secrets.ts';
import { MAX_LINE, redactLine, shorten } from '../../src/shared/redact.ts';
import { createLog } from '../../adapters/_node/log.ts';
import { startSmtp, tokenIn, type Smtp } from '../helpers/mail.ts';
import { SAMPLE_SOURCE } from '../helpers/paths.ts';
import { type Started, startServer } from '../helpers/processes.ts';
import { buildInto, pipe, tempDir } from '../helpers/temp.ts';

let smtp: Smtp;
let server: Started;
let key: string;
let token: string;
let session: string;

const pct = (s: string) =>
  [...s].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`).join('');

/** One request with the path and headers exactly as given. */
function raw(method: string, target: string, headers: Record<string, string> = {}, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: server.port, method, path: target, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end(body);
  });
}

beforeAll(async () => {
  smtp = await startSmtp();
  const dist = await buildInto(SAMPLE_SOURCE, 'logs');
  const dir = await tempDir('logs');
  server = await startServer({
    DIST_DIR: dist,
    KEYS_DB: path.join(dir, 'keys.db'),
    SMTP_URL: smtp.url,
    PORTAL_ISSUE_LIMIT_PER_MINUTE: '1000',
  });
  const json = { 'content-type': 'application/json' };
  await fetch(`${server.base}/portal/sign-in`, { method: 'POST', headers: json, body: '{"email":"logs@example.org"}' });
  const opened = await (
    await fetch(`${server.base}/portal/session`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ token: tokenIn(await smtp.mailTo('logs@example.org')) }),
    })
  ).json();
  session = opened.session;
  key = (
    await (
      await fetch(`${server.base}/portal/keys`, { method: 'POST', headers: { authorization: `Bearer ${session}` } })
    ).json()
  ).apiKey;
  // A second link whose token is never used: only ever sent in URLs below.
  await fetch(`${server.base}/portal/sign-in`, { method: 'POST', headers: json, body: '{"email":"logs@example.org"}' });
  token = tokenIn(await smtp.mailTo('logs@example.org', 1));
});

afterAll(async () => {
  await server?.stop();
  await smtp?.stop();
});

describe('the logs of a running server', () => {
  it('hold no key, token or session, however they were sent (30 ways)', async () => {
    const k = key;
    const ways: [string, string, Record<string, string>?][] = [
      ['GET', `/archive/year=1930/apikey=${k}`],
      ['GET', `/archive/apikey=${k}/`],
      ['GET', `/archive/year=1930/APIKEY=${k}`],
      ['GET', `/archive/year=1930/ApiKey=${k}`],
      ['GET', `/archive/year=1930/apikey=${pct(k)}`],
      ['GET', `/archive/year=1930/apikey=${pct(k).toLowerCase()}`],
      ['GET', `/archive/year=1930/apikey=${pct(k).replaceAll('%', '%25')}`],
      ['GET', `/archive/year=1930/api%4Bey=${k}`],
      ['GET', `/archive/year=1930/apikey%3D${k}`],
      ['GET', `/archive/year=1930/apikey=${k.slice(0, 16)}%${k.charCodeAt(16).toString(16)}${k.slice(17)}`],
      ['GET', `/archive/year=1930/key=${k}`],
      ['GET', `/archive/year=1930?apikey=${k}`],
      ['GET', `/archive/year=1930/apikey=${k}?key=${k}`],
      ['GET', `/person/name=${k}/apikey=${k}`],
      ['GET', `/person/name=${encodeURIComponent(`x ${k} y`)}/apikey=nope`],
      ['GET', `/${k}`],
      ['GET', `/archive/year=1930/apikey=FAA_${k.slice(4)}`],
      ['GET', `/archive/year=1930/apikey=${k.slice(4)}`],
      ['GET', `/archive/year=1930/apikey=${k}x`],
      ['GET', `/archive/year=1930/apikey=${k.slice(0, 30)}`],
      ['HEAD', `/archive/year=1930/apikey=${k}`],
      ['DELETE', `/portal/keys/${k}`],
      ['POST', `/portal/keys/revoke/${k}`],
      ['POST', `/portal/keys/rotate?apiKey=${k}`],
      ['GET', `/portal?token=${token}`],
      ['GET', `/portal/session?token=${pct(token)}`],
      ['POST', `/portal/keys?session=${session}`],
      ['GET', `/archive/year=1930/apikey=${k}`, { authorization: `Bearer ${k}` }],
      ['POST', `/portal/keys/x${session}`, { authorization: `Bearer ${session}` }],
      ['GET', `/archive/year=1930/apikey=%5C%75%30%30%36%36aa_${k.slice(4)}`],
    ];
    expect(ways).toHaveLength(30);
    for (const [method, target, headers] of ways) await raw(method, target, headers);
    await new Promise((r) => setTimeout(r, 300));
    await server.stop(); // the logger flushes on the way out
    const lines = server
      .output()
      .split('\n')
      .filter((l) => l.trim() !== '');
    const logLines = lines.filter((l) => l.startsWith('{'));
    expect(logLines.length).toBeGreaterThanOrEqual(34);
    const access = logLines.map((l) => JSON.parse(l).msg as string);
    expect(access).toContain(
      `GET /archive/year=1930/apikey=${k.slice(0, 12)}... 200 ${
        /\d+/.exec(
          access
            .find((a) => a.startsWith('GET /archive/year=1930/apikey=faa_'))!
            .split(' ')
            .at(-1)!,
        )![0]
      }ms`,
    );
    for (const secret of [key, token, session]) {
      const body = secret.slice(4);
      for (const form of [
        body.slice(0, 20),
        body.slice(-20),
        pct(body).slice(0, 30),
        pct(body).slice(0, 30).toLowerCase(),
        body.slice(8, 28).toLowerCase(),
      ]) {
        const leak = lines.find((l) => l.includes(form) || l.toLowerCase().includes(form.toLowerCase()));
        expect(leak, `${secret.slice(0, 4)} leaked as ${form}`).toBeUndefined();
      }
    }
  });
});

/** What a pipe's reader gets, read from now on, once it holds `count` lines. */
function readLines(reader: Socket, count: number): Promise<string> {
  const chunks: Buffer[] = [];
  let lines = 0;
  return new Promise((resolve) => {
    reader.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      for (const byte of chunk) if (byte === 0x0a) lines++;
      if (lines >= count) resolve(Buffer.concat(chunks).toString('utf8'));
    });
    reader.resume();
  });
}

describe('the logger', () => {
  it('returns before the line is written, writes it as given, and flushes', async () => {
    const { fd, reader } = await pipe('log');
    const log = createLog({ destination: fd });
    const k = generateKey();
    const started = performance.now();
    // Lines as the front door makes them: a key's id, never the key. About 100 KB: more than the pipe holds unread.
    for (let i = 0; i < 1000; i++) log(`GET /archive/apikey=${k.slice(0, 12)}... 200 1ms`);
    expect(performance.now() - started).toBeLessThan(1000); // nothing waited for the reader, which has read nothing yet
    const read = readLines(reader, 1000);
    expect(await log.flush()).toBe(true);
    const text = await read;
    reader.destroy();
    expect(text.split('\n').filter(Boolean)).toHaveLength(1000);
    expect(text).not.toContain(k);
    expect(JSON.parse(text.split('\n')[0])).toMatchObject({
      level: 'info',
      msg: `GET /archive/apikey=${k.slice(0, 12)}... 200 1ms`,
    });
  });

  it('writes every line once, whole and in order, across batches of any size and characters of any width', async () => {
    const { fd, reader } = await pipe('log');
    // No timed write within the test: only a batch of flushBytes waiting starts one.
    const log = createLog({ destination: fd, flushBytes: 4096, flushMs: 600_000 });
    const k = generateKey();
    const wide = 'é"\\\u0001 \u{1F3AC} Amélie\t';
    const lines = Array.from(
      { length: 400 },
      (_, i) => `GET /person/name=${wide.repeat(i % 60)}/apikey=${k.slice(0, 12)}... 200 ${i}ms`,
    );
    for (const line of lines) log(line);
    const read = readLines(reader, lines.length);
    await new Promise((resolve) => reader.once('data', resolve)); // handed over while nobody flushed
    expect(await log.flush()).toBe(true);
    const text = await read;
    reader.destroy();
    const written = text.split('\n').filter(Boolean);
    expect(written).toHaveLength(lines.length);
    written.forEach((text, i) => {
      const { msg } = JSON.parse(text);
      expect(msg).toBe(lines[i]);
      expect(msg.endsWith(` 200 ${i}ms`)).toBe(true);
      expect(msg).not.toContain(k);
    });
  });

  it('counts the lines a destination too slow to keep up made it drop, and says so in the log', async () => {
    const file = path.join(await tempDir('log'), 'access.log');
    const log = createLog({ destination: file, maxBufferedBytes: 20_000, flushBytes: 1000 });
    const line = (i: number) => `GET /archive/year=${1929 + (i % 98)}/apikey=faa_bad 200 ${i}ms`;
    // A burst whose batches (each over 20,000 bytes) the destination cannot take, then lines it can.
    for (let i = 0; i < 1000; i++) log(line(i));
    await log.flush();
    for (let i = 1000; i < 1100; i++) log(line(i));
    await log.flush();
    const total = 1100;
    const lines = (await readFile(file, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const notices = lines
      .filter((l) => l.level === 'error')
      .map((l) => /^log: (\d+) lines dropped: the destination was too slow$/.exec(l.msg));
    const dropped = notices.reduce((sum, m) => sum + Number(m![1]), 0);
    expect(dropped).toBeGreaterThan(0);
    const kept = lines.filter((l) => l.level === 'info').map((l) => Number(/ (\d+)ms$/.exec(l.msg)![1]));
    expect(kept.length).toBeGreaterThanOrEqual(100);
    expect(kept.length + dropped).toBe(total);
    expect(kept).toEqual([...kept].sort((a, b) => a - b)); // what is kept stays in order
  });
});

describe('a line too long to keep whole', () => {
  it('keeps its start and its end, cut only between atoms, so every secret in what is kept stays whole and masked', () => {
    const key = generateKey();
    // Keys placed at every offset around both cuts: wherever one falls, it is kept whole or left out whole.
    for (let at = MAX_LINE - 700; at < MAX_LINE - 300; at += 7) {
      const line = `GET /person/name=${'x'.repeat(at)}/apikey=${key}/${'y'.repeat(15 * 1024)}/${key.slice(4)} 403 0ms`;
      const short = shorten(line);
      expect(short.length).toBeLessThanOrEqual(MAX_LINE + 64);
      expect(short).toMatch(/ \.\.\.\[\d+ characters left out\]\.\.\. /);
      expect(short.endsWith(' 403 0ms')).toBe(true);
      const kept = short.split(/ \.\.\.\[\d+ characters left out\]\.\.\. /).join(' ');
      for (const piece of kept.split(/[^A-Za-z0-9_%\\-]+/)) expect(line.split(/[^A-Za-z0-9_%\\-]+/)).toContain(piece);
      expect(redactLine(short)).not.toContain(key.slice(4, 24)); // neither the key nor its bare body survives
    }
  });

  it('leaves a line of ordinary length alone', () => {
    const line = `GET /archive/year=2026/apikey=${generateKey()} 200 1ms`;
    expect(shorten(line)).toBe(line);
  });
});
