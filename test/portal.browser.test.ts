/**
 * The portal page in headless Chromium (Debian's package, driven by
 * playwright-core; never a downloaded browser), the whole way a person goes:
 * ask for a link, read the mail (a real SMTP server in this process), open the
 * link, get a key, call the API, rotate, revoke, sign in again. Twice: against
 * `npm start` (the real start script, its SQLite store), and against the
 * Netlify portal function (its default export, behind a small Node harness)
 * with keys in a local Blobs server and the API answered by the edge function
 * under Deno.
 */
import { mkdir } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBlobs, type Blobs } from './_blobs.ts';
import { startSmtp, type Smtp } from './_mail.ts';
import { buildInto, SAMPLE_SOURCE, startEdge, startServer, type Started, tempDir } from './helpers.ts';

let smtp: Smtp;
let browser: Browser;
let dist: string;

beforeAll(async () => {
  smtp = await startSmtp();
  dist = await buildInto(SAMPLE_SOURCE, 'portal-browser');
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
afterAll(async () => {
  await browser?.close();
  await smtp?.stop();
});

/** What a page did that a person would notice: failed requests and console errors. */
function watch(page: Page) {
  const problems: string[] = [];
  page.on('response', (r) => r.status() >= 400 && !r.url().includes('/portal/') && problems.push(`${r.status()} ${r.url()}`));
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  return problems;
}

/** The link in the newest mail to `email` after `skip` earlier ones. */
async function link(email: string, skip: number): Promise<string> {
  const mail = await smtp.mailTo(email, skip, 15_000);
  return /(https?:\/\/\S+\/portal#token=fat_[A-Za-z0-9_-]{43})/.exec(mail.text)![1];
}

async function askForLink(page: Page, base: string, email: string): Promise<string> {
  const before = smtp.count(email);
  await page.goto(`${base}/portal`);
  await page.getByLabel('E-mail address').focus();
  await page.keyboard.type(email);
  await page.keyboard.press('Enter');
  await page.locator('#sign-in-result .ok').filter({ hasText: 'Check your inbox' }).waitFor();
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('sign-in-result');
  return link(email, before);
}

async function openLink(page: Page, url: string, email: string): Promise<void> {
  await page.goto(url);
  await page.getByRole('heading', { name: `Signed in as ${email}` }).waitFor();
  expect(page.url()).not.toContain('token');
  expect(await page.evaluate(() => location.href)).not.toContain('fat_');
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('account-title');
}

async function shownKey(page: Page, base: string): Promise<string> {
  const box = page.locator('#account-result .key-box');
  await box.waitFor();
  const key = (await box.locator('.key').innerText()).trim();
  expect(key).toMatch(/^faa_[A-Za-z0-9_-]{32}$/);
  expect((await box.locator('.example').innerText()).trim()).toBe(`${base}/archive/year=2026/apikey=${key}`);
  expect(await box.getByRole('button', { name: 'Copy key' }).count()).toBe(1);
  return key;
}

/** The whole flow of the issue's "Done when", on whichever server `base` is. */
async function flow(base: string, email: string, screenshot: string): Promise<void> {
  const context = await browser.newContext({ viewport: { width: 900, height: 1100 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const page = await context.newPage();
  const problems = watch(page);
  const status = async (key: string) => (await fetch(`${base}/archive/year=2026/apikey=${key}`)).status;
  const becomes = (key: string, code: number) => expect.poll(() => status(key), { timeout: 10_000, interval: 200 }).toBe(code);

  expect((await page.goto(`${base}/portal`))?.status()).toBe(200);
  expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Your API key');
  await openLink(page, await askForLink(page, base, email), email);
  expect(await page.locator('#key-state').innerText()).toBe('You have no active key.');

  await page.getByRole('button', { name: 'Get a key' }).click();
  const first = await shownKey(page, base);
  expect(await page.evaluate(() => document.activeElement?.getAttribute('data-slot'))).toBe('title');
  expect(await status(first)).toBe(200);
  await page.getByRole('button', { name: 'Copy key' }).click();
  await page.getByRole('status').filter({ hasText: 'Key copied.' }).waitFor();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(first);
  expect(await page.locator('#key-state').innerText()).toContain(first.slice(0, 12));
  await mkdir(path.dirname(screenshot), { recursive: true });
  await page.screenshot({ path: screenshot, fullPage: true });

  await page.getByRole('button', { name: 'Rotate key' }).click();
  await page.locator('.key-box .done').filter({ hasText: 'old one no longer works' }).waitFor();
  const second = await shownKey(page, base);
  expect(second).not.toBe(first);
  await becomes(first, 403);
  expect(await status(second)).toBe(200);

  await page.getByRole('button', { name: 'Revoke key' }).click();
  await page.locator('#account-result .ok').filter({ hasText: 'Key revoked' }).waitFor();
  await becomes(second, 403);

  await openLink(page, await askForLink(page, base, email), email);
  await page.getByRole('button', { name: 'Get a key' }).click();
  const third = await shownKey(page, base);
  expect(await status(third)).toBe(200);
  expect(page.url()).toBe(`${base}/portal`);
  expect(problems).toEqual([]);
  await context.close();
}

describe('the key portal page against npm start', () => {
  let server: Started;
  beforeAll(async () => {
    const dir = await tempDir('portal-browser-node');
    server = await startServer({ DIST_DIR: dist, KEYS_DB: path.join(dir, 'keys.db'), SMTP_URL: smtp.url, PORTAL_ISSUE_LIMIT_PER_MINUTE: '100' });
  });
  afterAll(() => server?.stop());

  it('takes a person from an e-mail address to a working key, through rotation, revocation and a second sign-in', async () => {
    await flow(server.base, 'browser@example.org', path.resolve('test-results/portal.png'));
  });

  it('is usable from the keyboard alone, with labelled fields and a visible focus ring', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.base}/portal`);
    await page.keyboard.press('Tab'); // the site link
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('email');
    expect(await page.getByLabel('E-mail address').evaluate((el) => getComputedStyle(el).outlineStyle)).toBe('solid');
    await page.keyboard.press('Enter');
    expect(await page.locator('#sign-in-result .error').innerText()).toBe('Enter your e-mail address.');
    await page.close();
  });
});

describe('the key portal page against the Netlify portal function', () => {
  let blobs: Blobs;
  let harness: http.Server;
  let base: string;
  let stopEdge: () => Promise<void>;

  beforeAll(async () => {
    blobs = await startBlobs('portal-browser-blobs');
    // What Netlify gives the function: Blobs access and the site's settings, from the environment.
    Object.assign(process.env, { NETLIFY_BLOBS_CONTEXT: blobs.context, SMTP_URL: smtp.url, PORTAL_ISSUE_LIMIT_PER_MINUTE: '100' });
    const fn = await import('../netlify/functions/portal.mts');
    const edge = await startEdge(dist, { NETLIFY_BLOBS_CONTEXT: blobs.context, KEY_CACHE_TTL_MS: '1000' });
    stopEdge = edge.stop;
    const paths = fn.config.path.map((p) => new RegExp(`^${p.replace('*', '.*')}$`));
    harness = http.createServer(async (req, res) => {
      const url = new URL(req.url ?? '/', base);
      if (paths.some((p) => p.test(url.pathname))) {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        const request = new Request(url, { method: req.method, headers: req.headers as Record<string, string>, body: chunks.length ? Buffer.concat(chunks) : undefined });
        const response = await fn.default(request, { ip: req.socket.remoteAddress ?? '' });
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(Buffer.from(await response.arrayBuffer()));
        return;
      }
      // Everything else is the CDN and the edge function: the tests' Deno stand-in for them.
      const upstream = http.request({ host: '127.0.0.1', port: edge.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode!, r.headers);
        r.pipe(res);
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => harness.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(harness.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    harness?.closeAllConnections();
    await new Promise((resolve) => harness?.close(resolve));
    await stopEdge?.();
    await blobs?.stop();
  });

  it('takes a person the same way, with keys in Blobs and the API checked by the edge function', async () => {
    await flow(base, 'netlify@example.org', path.resolve('test-results/portal-netlify.png'));
  });
});
