import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { constantTimeEqual, generateKey, Keys, KeyError, MemoryKeyBackend, redactLine } from '../src/keys.ts';
import { RateLimiter } from '../src/rate-limit.ts';
import { createNodeServer } from '../src/server/server.node.ts';
import { buildInto, eventually, rawRequest, ROOT, SAMPLE_SOURCE, tempDir } from './helpers.ts';

const run = promisify(execFile);
/** The README's key command, run as a user would (npm run --silent keys -- ...). */
const keysCommand = (keysFile: string, ...args: string[]) =>
  run('npm', ['run', '--silent', 'keys', '--', ...args], { cwd: ROOT, env: { ...process.env, KEYS_FILE: keysFile } });

describe('keys', () => {
  it('are random, 192 bits, URL-safe and distinct', () => {
    const keys = Array.from({ length: 200 }, generateKey);
    for (const k of keys) expect(k).toMatch(/^faa_[A-Za-z0-9_-]{32}$/);
    expect(new Set(keys).size).toBe(200);
    expect(encodeURIComponent(keys[0])).toBe(keys[0]);
  });

  it('are stored as hashes only and checked against them', async () => {
    const backend = new MemoryKeyBackend();
    const keys = new Keys(backend);
    const key = await keys.issue('Someone@Example.org');
    expect(JSON.stringify([...backend.records.values()])).not.toContain(key.slice(12));
    expect(await keys.verify(key)).toBe(true);
    expect(await keys.verify(`${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`)).toBe(false);
    expect(await keys.verify('')).toBe(false);
  });

  it('compare in constant time without an early exit', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abd')).toBe(false);
    expect(constantTimeEqual('abc', 'ab')).toBe(false);
  });

  it('allow one active key per e-mail, rotation and revocation with the current key', async () => {
    const keys = new Keys(new MemoryKeyBackend());
    const first = await keys.issue('a@example.org');
    await expect(keys.issue('A@example.org')).rejects.toMatchObject({ status: 409 });
    const second = await keys.rotate(first);
    expect(await keys.verify(first)).toBe(false);
    expect(await keys.verify(second)).toBe(true);
    await expect(keys.rotate(first)).rejects.toBeInstanceOf(KeyError);
    await keys.revoke(second);
    expect(await keys.verify(second)).toBe(false);
    expect(await keys.verify(await keys.issue('a@example.org'))).toBe(true);
    await expect(keys.issue('not an email')).rejects.toMatchObject({ status: 400 });
  });

  it('are redacted from log lines', () => {
    const key = generateKey();
    const line = redactLine(`GET /person/name=X/apikey=${key} 200 and /archive/apikey=${key}?x=1`);
    expect(line).not.toContain(key);
    expect(line).toContain(`apikey=${key.slice(0, 12)}…`);
  });
});

describe('the rate limiter', () => {
  it('lets the limit through per window and tells how long to wait', () => {
    let now = 1_000_000;
    const limiter = new RateLimiter({ limit: 60, now: () => now });
    for (let i = 0; i < 60; i++) expect(limiter.hit('k').ok).toBe(true);
    now += 15_500;
    expect(limiter.hit('k')).toEqual({ ok: false, retryAfter: 45 });
    now += 44_499;
    expect(limiter.hit('k')).toEqual({ ok: false, retryAfter: 1 });
    now += 1;
    expect(limiter.hit('k').ok).toBe(true);
  });

  it('keeps its memory bounded however many keys arrive', () => {
    const limiter = new RateLimiter({ limit: 2, maxKeys: 1000 });
    for (let i = 0; i < 50_000; i++) limiter.hit(`key-${i}`);
    expect(limiter.size).toBeLessThanOrEqual(1000);
  });

  it('refuses a limit that is not a whole number from 1 up', () => {
    expect(() => new RateLimiter({ limit: 0 })).toThrow('Expected `limit` to be a whole number from 1 and up, got 0');
  });
});

describe('the keys command and a running server', () => {
  let keysFile: string;
  let port: number;
  let close: () => Promise<void>;
  const logs: string[] = [];

  beforeAll(async () => {
    const dist = await buildInto(SAMPLE_SOURCE, 'keys');
    keysFile = path.join(await tempDir('keys-file'), 'keys.json');
    const { server } = createNodeServer({ dist, keysFile, log: (l) => logs.push(redactLine(l)) });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    close = () => new Promise((resolve) => server.close(() => resolve()));
  });
  afterAll(() => close());

  it('prints a new key alone on stdout, which the running server accepts within seconds', async () => {
    const { stdout } = await keysCommand(keysFile, 'issue', 'cli@example.org');
    const key = stdout.trim();
    expect(stdout).toBe(`${key}\n`);
    expect(key).toMatch(/^faa_[A-Za-z0-9_-]{32}$/);
    expect(await readFile(keysFile, 'utf8')).not.toContain(key);
    expect(await eventually(async () => (await rawRequest(port, 'GET', `/archive/year=1929/apikey=${key}`)).status === 200, 5000)).toBe(true);

    const rotated = (await keysCommand(keysFile, 'rotate', key)).stdout.trim();
    expect(rotated).not.toBe(key);
    expect(await eventually(async () => (await rawRequest(port, 'GET', `/archive/year=1929/apikey=${key}`)).status === 403, 5000)).toBe(true);
    expect((await rawRequest(port, 'GET', `/archive/year=1929/apikey=${rotated}`)).status).toBe(200);

    await keysCommand(keysFile, 'revoke', rotated);
    expect(await eventually(async () => (await rawRequest(port, 'GET', `/archive/year=1929/apikey=${rotated}`)).status === 403, 5000)).toBe(true);

    const list = (await keysCommand(keysFile, 'list')).stdout;
    expect(list).toContain('cli@example.org');
    expect(list).toContain(key.slice(0, 12));
    expect(list).not.toContain(key);
    expect(list).not.toContain(rotated);
    expect(logs.length).toBeGreaterThan(3);
    expect(logs.join('\n')).not.toContain(key);
    expect(logs.join('\n')).not.toContain(rotated);
  });

  it('explains its usage and refuses a bad e-mail with exit code 1', async () => {
    const usage = await keysCommand(keysFile, 'frobnicate').then(() => null, (e: { code: number; stderr: string }) => e);
    expect(usage?.code).toBe(2);
    expect(usage?.stderr).toContain('usage: npm run --silent keys --');
    const bad = await keysCommand(keysFile, 'issue', 'nope').then(() => null, (e: { code: number; stderr: string }) => e);
    expect(bad?.code).toBe(1);
    expect(bad?.stderr.trim()).toBe('keys: Invalid email: expected an address like name@example.org');
  });
});
