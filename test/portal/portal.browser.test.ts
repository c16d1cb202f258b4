/**
 * The portal page in headless Chromium (the one test/helpers/browser.ts
 * finds, driven by playwright-core; never a downloaded browser), the whole way a person goes:
 * ask for a link, read the mail (a real SMTP server in this process), open the
 * link, get a key, call the API, reload and stay signed in, rotate and revoke
 * through their confirmation step (cancelling once), sign out (the session
 * then refused by the server), sign in again. Twice: against `npm start` (the
 * real start script, its SQLite store), and against `npm run dev:netlify` (the
 * Netlify portal function with keys in a local Blobs server, the API answered
 * by the edge function under Deno), and against `npm run dev:cloudflare` (the
 * Worker under wrangler dev, keys in its local D1, mail through an HTTP e-mail
 * API in this process).
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.ts';
import { misfits, SCREEN_WIDTHS } from '../helpers/fit.ts';
import { startMailApi, startSmtp, type Smtp } from '../helpers/mail.ts';
import { SAMPLE_SOURCE } from '../helpers/paths.ts';
import { type Started, startNetlifyLocal, startServer, startWorker } from '../helpers/processes.ts';
import { buildInto, tempDir } from '../helpers/temp.ts';

let smtp: Smtp;
let browser: Browser;
let dist: string;

beforeAll(async () => {
  smtp = await startSmtp();
  dist = await buildInto(SAMPLE_SOURCE, 'portal-browser');
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await smtp?.stop();
});

/** What a page did that a person would notice: failed requests and console errors. */
function watch(page: Page) {
  const problems: string[] = [];
  page.on(
    'response',
    (r) => r.status() >= 400 && !r.url().includes('/portal/') && problems.push(`${r.status()} ${r.url()}`),
  );
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  return problems;
}

/**
 * Where a server's sign-in mail arrives: how many an address got, and the link in the one after `skip` earlier ones.
 */
interface Mailbox {
  count(email: string): number;
  link(email: string, skip: number): Promise<string>;
}
const LINK = /(https?:\/\/\S+\/portal#token=fat_[A-Za-z0-9_-]{43})/;
/** The SMTP server's mailbox (npm start, dev:netlify). */
const smtpBox: Mailbox = {
  count: (email) => smtp.count(email),
  link: async (email, skip) => LINK.exec((await smtp.mailTo(email, skip, 15_000)).text)![1],
};
let mailbox: Mailbox = smtpBox;

async function askForLink(page: Page, base: string, email: string): Promise<string> {
  const link = (address: string, skip: number) => mailbox.link(address, skip);
  const before = mailbox.count(email);
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
  const becomes = (key: string, code: number) =>
    expect.poll(() => status(key), { timeout: 10_000, interval: 200 }).toBe(code);

  expect((await page.goto(`${base}/portal/`))?.status()).toBe(200);
  expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Your API key');
  expect((await page.goto(`${base}/portal`))?.status()).toBe(200);
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

  // A reload keeps the session (sessionStorage, this tab only; nothing in localStorage).
  await page.reload();
  await page.getByRole('heading', { name: `Signed in as ${email}` }).waitFor();
  expect(await page.locator('#key-state').innerText()).toContain(first.slice(0, 12));
  expect(await page.evaluate(() => [sessionStorage.length, localStorage.length])).toEqual([1, 0]);

  await page.getByRole('button', { name: 'Rotate key' }).click();
  const confirm = page.getByRole('dialog', { name: 'Rotate your key?' });
  await confirm.waitFor();
  expect(await confirm.innerText()).toContain(
    `your key ${first.slice(0, 12)}… stops working everywhere it is used: at once, or after the time you choose`,
  );
  // "Now" is the default, and says it is the one for a leaked key.
  expect(await confirm.getByRole('radio', { name: /Now/ }).isChecked()).toBe(true);
  expect(await confirm.getByRole('group', { name: 'When should the old key stop working?' }).innerText()).toContain(
    'choose this if the key leaked',
  );
  await page.screenshot({ path: screenshot.replace(/\.png$/, '-confirm.png') });
  await confirm.getByRole('button', { name: 'Yes, rotate' }).click();
  await page.locator('.key-box .done').filter({ hasText: 'old one no longer works' }).waitFor();
  const rotated = await shownKey(page, base);
  expect(rotated).not.toBe(first);
  await becomes(first, 403);
  expect(await status(rotated)).toBe(200);
  expect(await page.locator('#ending').isHidden()).toBe(true);

  // With a 1-hour grace both keys answer; "Stop the old key now" stops the old one within 2 s.
  await page.getByRole('button', { name: 'Rotate key' }).click();
  await confirm.getByRole('radio', { name: 'In 1 hour' }).check();
  await confirm.getByRole('button', { name: 'Yes, rotate' }).click();
  await page.locator('.key-box .done').filter({ hasText: 'old one works until' }).waitFor();
  const second = await shownKey(page, base);
  await becomes(second, 200);
  expect(await status(rotated)).toBe(200);
  expect(await page.locator('#ending-state').innerText()).toContain(
    `Your old key ${rotated.slice(0, 12)}… keeps working until`,
  );
  await page.reload();
  await page.getByRole('heading', { name: `Signed in as ${email}` }).waitFor();
  expect(await page.locator('#ending-state').innerText()).toContain(rotated.slice(0, 12));
  await page.screenshot({ path: screenshot.replace(/\.png$/, '-grace.png'), fullPage: true });
  await page.getByRole('button', { name: 'Stop the old key now' }).click();
  await page
    .getByRole('dialog', { name: 'Stop the old key now?' })
    .getByRole('button', { name: 'Yes, stop it' })
    .click();
  await page.locator('#account-result .ok').filter({ hasText: 'Old key stopped' }).waitFor();
  const stopped = Date.now();
  await becomes(rotated, 403);
  expect(Date.now() - stopped).toBeLessThan(2_000);
  expect(await status(second)).toBe(200);
  expect(await page.locator('#ending').isHidden()).toBe(true);

  // Cancelling leaves the key working; confirming revokes it.
  await page.getByRole('button', { name: 'Revoke key' }).click();
  await page.getByRole('dialog', { name: 'Revoke your key?' }).getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('dialog').waitFor({ state: 'hidden' });
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('revoke');
  expect(await status(second)).toBe(200);
  await page.getByRole('button', { name: 'Revoke key' }).click();
  await page.getByRole('dialog', { name: 'Revoke your key?' }).getByRole('button', { name: 'Yes, revoke' }).click();
  await page.locator('#account-result .ok').filter({ hasText: 'Key revoked' }).waitFor();
  await becomes(second, 403);

  // Sign out ends the session on the server: its token is refused from then on, and a reload shows the sign-in form.
  const token = await page.evaluate(() => sessionStorage.getItem('portal-session'));
  expect(token).toMatch(/^fas_/);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.locator('#sign-in-result .ok').filter({ hasText: 'Signed out.' }).waitFor();
  const after = await fetch(`${base}/portal/account`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
  });
  expect(after.status).toBe(401);
  await page.reload();
  await page.getByRole('button', { name: 'Send me a sign-in link' }).waitFor();
  expect(await page.locator('#account').isHidden()).toBe(true);
  expect(await page.evaluate(() => sessionStorage.length)).toBe(0);

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
    server = await startServer({
      DIST_DIR: dist,
      KEYS_DB: path.join(dir, 'keys.db'),
      SMTP_URL: smtp.url,
      PORTAL_ISSUE_LIMIT_PER_MINUTE: '100',
    });
  });
  afterAll(() => server?.stop());

  it('takes a person from an e-mail address to a working key, through a reload, confirmed rotation and revocation, sign-out and a second sign-in', async () => {
    await flow(server.base, 'browser@example.org', path.resolve('test-results/portal.png'));
  });

  it('fits every width from 320 to 1920 px, signed out and signed in with a key: no sideways scroll, no text out of its box', async () => {
    const context = await browser.newContext({ viewport: { width: 1024, height: 900 } });
    const page = await context.newPage();
    const signedOut = await context.newPage();
    await signedOut.goto(`${server.base}/portal`);
    await openLink(page, await askForLink(page, server.base, 'widths@example.org'), 'widths@example.org');
    await page.getByRole('button', { name: 'Get a key' }).click();
    await shownKey(page, server.base);
    await mkdir(path.resolve('test-results'), { recursive: true });
    for (const width of SCREEN_WIDTHS) {
      for (const [state, shown] of [
        ['signed out', signedOut],
        ['signed in', page],
      ] as const) {
        await shown.setViewportSize({ width, height: 900 });
        expect([width, state, await misfits(shown)]).toEqual([width, state, []]);
        if (width === 1024 || width === 320)
          await shown.screenshot({
            path: path.resolve(`test-results/portal-${state.replace(' ', '-')}-${width}.png`),
            fullPage: true,
          });
      }
    }
    await context.close();
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

describe('the key portal page against npm run dev:cloudflare', () => {
  let worker: Awaited<ReturnType<typeof startWorker>> | undefined;
  let mailApi: Awaited<ReturnType<typeof startMailApi>> | undefined;
  let base = '';
  beforeAll(async () => {
    mailApi = await startMailApi();
    const api = mailApi;
    worker = await startWorker(dist, {
      ARCHIVE_SOURCE: SAMPLE_SOURCE,
      MAIL_API_URL: api.url,
      MAIL_API_TOKEN: 'test-token',
      PORTAL_ISSUE_LIMIT_PER_MINUTE: '100',
    });
    base = `http://127.0.0.1:${worker.port}`;
    mailbox = {
      count: (email) => api.to(email).length,
      async link(email, skip) {
        await expect.poll(() => api.to(email).length, { timeout: 15_000, interval: 100 }).toBeGreaterThan(skip);
        return LINK.exec(String(api.to(email)[skip].body.text))![1];
      },
    };
  }, 200_000);
  afterAll(async () => {
    mailbox = smtpBox;
    await worker?.stop();
    await mailApi?.stop();
  });

  it('takes a person the same way on the Worker, with keys in D1', async () => {
    await flow(base, 'cloudflare@example.org', path.resolve('test-results/portal-cloudflare.png'));
  });
});

describe('the key portal page against npm run dev:netlify', () => {
  let local: Started;
  beforeAll(async () => {
    const dir = await tempDir('portal-browser-netlify');
    local = await startNetlifyLocal({
      DIST_DIR: dist,
      ARCHIVE_SOURCE: SAMPLE_SOURCE,
      NETLIFY_LOCAL_DIR: dir,
      SMTP_URL: smtp.url,
      PORTAL_ISSUE_LIMIT_PER_MINUTE: '100',
      KEY_CACHE_TTL_MS: '1000',
    });
  });
  afterAll(() => local?.stop());

  it('takes a person the same way on the local Netlify path, with keys in Blobs and the API checked by the edge function', async () => {
    await flow(local.base, 'netlify@example.org', path.resolve('test-results/portal-netlify.png'));
  });
});
