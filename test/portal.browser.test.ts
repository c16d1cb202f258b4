/**
 * The portal page in headless Chromium (Debian's package, driven by
 * playwright-core; never a downloaded browser) against the Node server as
 * `npm start` runs it: the sample built into a temp folder, the portal
 * mounted over a temp key file.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../build/build.ts';
import { portalFiles } from '../build/portal-files.ts';
import { nodePortal } from '../src/server/portal.node.ts';
import { createNodeServer } from '../src/server/server.node.ts';

const SCREENSHOT = path.resolve('test-results/portal.png');

let dir: string;
let server: http.Server;
let base: string;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'faa-portal-browser-'));
  const dist = path.join(dir, 'dist');
  await build({ source: 'data/sample/oscars-sample.tsv', out: dist, summary: path.join(dir, 'summary.json'), log: () => {} });
  // The page, in case the build does not publish it yet (build/public.ts wires portalFiles() in).
  for (const [name, bytes] of portalFiles()) await writeFile(path.join(dist, name), bytes);
  ({ server } = createNodeServer({ dist, keysFile: path.join(dir, 'keys.json'), portal: (keys) => nodePortal(keys) }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const context = await browser.newContext({ viewport: { width: 900, height: 1100 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  page = await context.newPage();
});

afterAll(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

/** The API's status for a key, asked the way a user would (the page's example URL shape). */
const apiStatus = async (key: string) => (await fetch(`${base}/archive/year=2026/apikey=${key}`)).status;

describe('the key portal page in a browser', () => {
  let first: string;
  let second: string;

  it('opens at /portal with labelled fields and the note on keeping keys out of logs', async () => {
    const response = await page.goto(`${base}/portal`);
    expect(response?.status()).toBe(200);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Your API key');
    expect(await page.getByLabel('E-mail address').count()).toBe(1);
    expect(await page.getByLabel('Current key').count()).toBe(1);
    expect(await page.getByLabel('Key to revoke').count()).toBe(1);
    expect(await page.locator('#url-note').innerText()).toMatch(/key sits in the request URL.*rotate the key at once if it leaks/s);
  });

  it('gets a key from the keyboard alone, shows it once with a copy button and an example URL, and the key works', async () => {
    await page.getByLabel('E-mail address').focus();
    await page.keyboard.type('browser@example.org');
    await page.keyboard.press('Enter');
    const box = page.locator('#get-result .key-box');
    await box.waitFor();
    first = (await box.locator('.key').innerText()).trim();
    expect(first).toMatch(/^faa_[A-Za-z0-9_-]{32}$/);
    expect(await box.getByRole('button', { name: 'Copy key' }).count()).toBe(1);
    const example = (await box.locator('.example').innerText()).trim();
    expect(example).toBe(`${base}/archive/year=2026/apikey=${first}`);
    expect(await page.locator('#get-result').getAttribute('aria-live')).toBe('polite');

    const answer = await fetch(example);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await answer.json()).toBeTruthy();

    await box.getByRole('button', { name: 'Copy key' }).click();
    await box.getByRole('status').filter({ hasText: 'Key copied.' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(first);

    await mkdir(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    console.log(`portal screenshot (a key shown): ${SCREENSHOT}`);
  });

  it('shows a visible focus ring on the focused control', async () => {
    await page.getByLabel('Current key').focus();
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Tab');
    const outline = await page.getByLabel('Current key').evaluate((el) => getComputedStyle(el).outlineStyle);
    expect(outline).toBe('solid');
  });

  it('refuses a second key for the same address and says to rotate or revoke', async () => {
    await page.getByLabel('E-mail address').fill('browser@example.org');
    await page.getByRole('button', { name: 'Get my key' }).click();
    const error = page.locator('#get-result .error');
    await error.waitFor();
    expect(await error.innerText()).toMatch(/already has an active key.*Rotate/);
    expect(await page.locator('#get-result').innerText()).not.toContain(first);
  });

  it('rotates: the old key stops working and the new one works', async () => {
    await page.getByLabel('Current key').fill(first);
    await page.getByRole('button', { name: 'Rotate key' }).click();
    const key = page.locator('#rotate-result .key-box .key');
    await key.waitFor();
    second = (await key.innerText()).trim();
    expect(second).toMatch(/^faa_/);
    expect(second).not.toBe(first);
    await expect.poll(() => apiStatus(first), { timeout: 10_000 }).toBe(403);
    expect(await apiStatus(second)).toBe(200);
  });

  it('revokes: the key stops working, and revoking it again is refused', async () => {
    await page.getByLabel('Key to revoke').fill(second);
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await page.locator('#revoke-result .ok').waitFor();
    await expect.poll(() => apiStatus(second), { timeout: 10_000 }).toBe(403);

    await page.getByLabel('Key to revoke').fill(second);
    await page.getByRole('button', { name: 'Revoke key' }).click();
    const error = page.locator('#revoke-result .error');
    await error.waitFor();
    expect(await error.innerText()).toBe('Forbidden - Invalid API Key');
  });
});
