/**
 * The reference page at `/` in headless Chromium (the one test/helpers/browser.ts
 * finds, driven by playwright-core; never a downloaded browser), over a Node server on the
 * built sample: every operation of the route table with its curl line, copy
 * button and example answer (checked against what the server really answers),
 * the "try it" form calling the API with a real key (200) and a bad one (403),
 * the errors and the links; a contents list (a side menu on a wide screen),
 * headings in words, and examples in JavaScript, Python and the client that,
 * run as shown, answer what the API answers; fitting every width from 320 to
 * 1920 px (test/helpers/fit.ts). Screenshots (390, 320 and 1024 px) go to
 * test-results/screenshots/ (git-ignored), named in the log.
 */
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '../../src/shared/messages.ts';
import { examplePath, ROUTES, SHAPES, template } from '../../src/shared/routes.ts';
import { launchChromium } from '../helpers/browser.ts';
import { misfits, SCREEN_WIDTHS } from '../helpers/fit.ts';
import { ROOT } from '../helpers/paths.ts';
import { type LocalServer, startLocalServer } from '../helpers/servers.ts';

const run = promisify(execFile);
const NODE_24 = path.join(ROOT, 'node_modules/.bin/node');

const SCREENSHOTS = path.resolve('test-results/screenshots');
const WIDTHS = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } } as const;
/** Every operation with an example answer to show: a dataset file is a download, not one. */
const OPERATIONS = [...ROUTES.filter((r) => r.answer !== 'file').map((r) => r.id), 'health'];

/**
 * Whether `shown` is `real` with parts left out as the page says it leaves
 * them out: arrays keep their first items, objects some of their keys, strings
 * a beginning followed by `…`. Written from what the page promises, not from
 * the code that abridges.
 */
function isAbridgementOf(shown: unknown, real: unknown): boolean {
  if (typeof shown === 'string' && typeof real === 'string')
    return shown === real || (shown.endsWith('…') && real.startsWith(shown.slice(0, -1)));
  if (Array.isArray(shown))
    return Array.isArray(real) && shown.length <= real.length && shown.every((s, i) => isAbridgementOf(s, real[i]));
  if (shown && typeof shown === 'object') {
    if (!real || typeof real !== 'object' || Array.isArray(real)) return false;
    return Object.entries(shown).every(
      ([k, v]) => Object.hasOwn(real, k) && isAbridgementOf(v, (real as Record<string, unknown>)[k]),
    );
  }
  return shown === real;
}

/** The JSON an example block shows, `… N more` lines taken out (with the comma before them, where they end a list). */
function shownJson(text: string): unknown {
  const json = text
    .split('\n')
    .filter((line) => !/^\s*… \d+ more,?$/.test(line))
    .join('\n')
    .replace(/,(\s*[\]}])/g, '$1');
  return JSON.parse(json);
}

describe('the reference page at /', () => {
  let local: LocalServer;
  let browser: Browser;
  beforeAll(async () => {
    local = await startLocalServer();
    browser = await launchChromium();
    await mkdir(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await local?.close();
  });

  /** A page at one width, with what a person would notice going wrong collected. */
  async function open(width: keyof typeof WIDTHS): Promise<{ page: Page; problems: string[] }> {
    const phone = width === 'phone' ? { deviceScaleFactor: 2, isMobile: true, hasTouch: true } : {};
    const context = await browser.newContext({ viewport: WIDTHS[width], ...phone });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: local.baseUrl });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => m.type() === 'error' && !m.text().includes('403') && problems.push(m.text()));
    page.on('pageerror', (e) => problems.push(e.message));
    page.on(
      'request',
      (r) =>
        !r.url().startsWith(local.baseUrl) && !r.url().startsWith('data:') && problems.push(`external: ${r.url()}`),
    );
    const response = await page.goto(`${local.baseUrl}/`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-type']).toContain('text/html');
    return { page, problems };
  }

  async function tryIt(page: Page, operation: string, key: string, status: string): Promise<string> {
    await page.locator(`button[data-try="${operation}"]`).click();
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Send request' }).click();
    await page.locator('#try-status').filter({ hasText: status }).waitFor();
    return page.locator('#try-body').innerText();
  }

  it('shows every operation of the route table, and health, with its path, a curl line for this site and a real example answer', async () => {
    const { page, problems } = await open('desktop');
    await expect(page.title()).resolves.toContain('Film Awards Archive API');
    for (const route of ROUTES) {
      const section = page.locator(`section#${route.id}`);
      expect(await section.locator('dl').innerText()).toContain(template(route));
      expect(await section.locator('pre[data-path]').innerText()).toBe(
        `curl "${local.baseUrl}${examplePath(route, 'YOUR_KEY')}"`,
      );
    }
    expect(await page.locator('section#health pre[data-path]').innerText()).toBe(`curl "${local.baseUrl}/health"`);
    for (const id of OPERATIONS) {
      const route = ROUTES.find((r) => r.id === id);
      const real = await fetch(`${local.baseUrl}${route ? examplePath(route, local.key) : '/health'}`);
      const [statusLine, ...body] = (await page.locator(`#answer-${id}`).innerText()).split('\n');
      expect([id, statusLine]).toEqual([id, expect.stringMatching(new RegExp(`^HTTP ${real.status}\\b`))]);
      const shown = shownJson(body.join('\n'));
      expect([id, isAbridgementOf(shown, await real.json())]).toEqual([id, true]);
    }
    // The whole archive is megabytes: its example says it is abridged, and is.
    expect(await page.locator('section#allCeremonies').innerText()).toContain('abridged');
    expect((await page.locator('#answer-allCeremonies').innerText()).split('\n').length).toBeLessThan(80);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('copies a curl line with its button', async () => {
    const { page } = await open('desktop');
    const route = ROUTES.find((r) => r.id === 'personByName')!;
    await page
      .locator(`section#${route.id}`)
      .getByRole('button', { name: /Copy the curl line/ })
      .click();
    await page.locator(`section#${route.id} .copied`).filter({ hasText: 'Copied.' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(
      `curl "${local.baseUrl}${examplePath(route, 'YOUR_KEY')}"`,
    );
    await page.close();
  });

  it('lets a reader try a lookup with a real key, showing the 200 and the answer the API gave', async () => {
    const { page, problems } = await open('desktop');
    const route = ROUTES.find((r) => r.id === 'filmByNameAndYear')!;
    const body = await tryIt(page, route.id, local.key, 'HTTP 200');
    expect(await page.locator('#try-status').innerText()).toBe('HTTP 200 OK');
    const real = await (await fetch(`${local.baseUrl}${examplePath(route, local.key)}`)).json();
    expect(JSON.parse(body)).toEqual(real);
    expect(await page.locator('#try-request').innerText()).toBe(
      `GET ${examplePath(route, `${local.key.slice(0, 12)}…`)}`,
    );
    expect(await page.locator('#try-request').innerText()).not.toContain(local.key);
    const shot = path.join(SCREENSHOTS, 'reference-1280.png');
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`reference page at 1280 px, after a 200 from the try-it form: ${shot}`);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('answers a search as it is typed, once the typing pauses, with one request for the word', async () => {
    const { page, problems } = await open('desktop');
    const asked: string[] = [];
    page.on('request', (r) => r.url().includes('/search/') && asked.push(new URL(r.url()).pathname));
    await page.locator('button[data-try="search"]').click();
    await page.getByLabel('API key').fill(local.key);
    await page.locator('#try-name').fill('');
    await page.locator('#try-name').pressSequentially('emma st', { delay: 30 });
    await page.locator('#try-status').filter({ hasText: 'HTTP 200' }).waitFor();
    await page.waitForFunction(() => document.getElementById('try-body')?.textContent?.includes('Emma Stone'));
    expect(JSON.parse(await page.locator('#try-body').innerText())[0]).toMatchObject({
      name: 'Emma Stone',
      kind: 'person',
    });
    expect(asked).toEqual(['/search/name=emma%20st/apikey=' + local.key]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows the 403 and its body for a key the API does not know', async () => {
    const { page } = await open('desktop');
    const body = await tryIt(page, 'ceremonyByYear', 'faa_not-a-key', 'HTTP 403');
    expect(await page.locator('#try-status').innerText()).toBe('HTTP 403 Forbidden');
    expect(JSON.parse(body)).toEqual({ error: MESSAGES.forbidden });
    await page.close();
  });

  it('fits a 390 px phone screen: nothing scrolls sideways, every operation and the try-it answer are there', async () => {
    const { page, problems } = await open('phone');
    await tryIt(page, 'personByName', local.key, 'HTTP');
    const widths = await page.evaluate(() => ({
      viewport: window.innerWidth,
      document: document.documentElement.scrollWidth,
      widest: Math.max(...[...document.querySelectorAll('body *')].map((e) => e.getBoundingClientRect().right)),
    }));
    expect(widths.viewport).toBe(390);
    expect(widths.document).toBeLessThanOrEqual(390);
    expect(widths.widest).toBeLessThanOrEqual(390);
    for (const id of OPERATIONS) await expect(page.locator(`section#${id}`).isVisible()).resolves.toBe(true);
    const shot = path.join(SCREENSHOTS, 'reference-390.png');
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`reference page at 390 px, after the try-it form answered: ${shot}`);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('fits every width from 320 to 1920 px: no sideways scroll, no text out of its box, and the contents list reachable', async () => {
    for (const width of SCREEN_WIDTHS) {
      const narrow = width < 768 ? { deviceScaleFactor: 2, isMobile: true, hasTouch: true } : {};
      const context = await browser.newContext({ viewport: { width, height: 900 }, ...narrow });
      const page = await context.newPage();
      await page.goto(`${local.baseUrl}/`, { waitUntil: 'load' });
      expect(await page.evaluate(() => window.innerWidth)).toBe(width);
      expect([width, await misfits(page)]).toEqual([width, []]);
      // The contents list is on screen or a scroll away, within the window's width, and its links work.
      const nav = page.getByRole('navigation', { name: 'Contents' });
      const menu = (await nav.boundingBox())!;
      expect([width, menu.x >= 0 && menu.x + menu.width <= width]).toEqual([width, true]);
      await nav.getByRole('link', { name: 'Errors' }).click();
      expect(page.url()).toMatch(/#errors$/);
      await expect(page.locator('#errors').isVisible()).resolves.toBe(true);
      if (width === 1024 || width === 320) {
        await page.goto(`${local.baseUrl}/`, { waitUntil: 'load' });
        const shot = path.join(SCREENSHOTS, `reference-${width}.png`);
        await page.screenshot({ path: shot });
        console.log(`reference page at ${width} px: ${shot}`);
      }
      await context.close();
    }
  });

  it('lists every answer shape, every error body and the limits', async () => {
    const { page } = await open('desktop');
    for (const [name, shape] of Object.entries(SHAPES))
      await expect(page.locator(`#shape-${name}`).innerText()).resolves.toContain(shape);
    const text = await page.locator('body').innerText();
    for (const message of [
      MESSAGES.forbidden,
      MESSAGES.tooMany,
      MESSAGES.fetchError,
      MESSAGES.methodNotAllowed,
      MESSAGES.badName,
      MESSAGES.badYear,
      MESSAGES.unavailable,
      MESSAGES.badTitleId,
      MESSAGES.badNameId,
    ]) {
      expect(text).toContain(message);
    }
    for (const route of ROUTES) if (route.notFound) expect(text).toContain(route.notFound);
    for (const words of ['60 requests per minute', 'Retry-After', 'If-None-Match']) expect(text).toContain(words);
    await page.close();
  });

  it('links to the OpenAPI document, the portal, the health check and the client, each of ours answering', async () => {
    const { page } = await open('desktop');
    const nav = page.getByRole('navigation', { name: 'Elsewhere' });
    for (const [name, href] of [
      ['Get an API key', '/portal'],
      ['OpenAPI 3.1 document', '/openapi.json'],
      ['Health', '/health'],
    ]) {
      expect(await nav.getByRole('link', { name }).getAttribute('href')).toBe(href);
      expect((await fetch(`${local.baseUrl}${href}`)).status).toBe(200);
    }
    expect(await nav.getByRole('link', { name: 'Typed client' }).getAttribute('href')).toBe('#client');
    // The page says how to get the client and use it, with no address it cannot know.
    const client = await page.locator('section#client').innerText();
    for (const words of [
      'npm run pack:client',
      'npm install ./film-awards-archive-client-',
      "from 'film-awards-archive-client'",
      'createClient(',
    ])
      expect(client).toContain(words);
    await page.close();
  });

  it('has a contents list linking every section and operation: beside the text on a wide screen, above it on a phone', async () => {
    for (const width of ['desktop', 'phone'] as const) {
      const { page, problems } = await open(width);
      const nav = page.getByRole('navigation', { name: 'Contents' });
      const hrefs = await nav.locator('a').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
      for (const id of [...OPERATIONS, 'try-section', 'answers', 'errors', 'limits', 'caching', 'client'])
        expect(hrefs).toContain(`#${id}`);
      for (const href of hrefs) expect(await page.locator(href!).count(), href!).toBe(1);
      const [menu, text] = [await nav.boundingBox(), await page.locator('main').boundingBox()];
      if (width === 'desktop') expect(menu!.x + menu!.width).toBeLessThanOrEqual(text!.x + 1);
      else expect(menu!.y + menu!.height).toBeLessThanOrEqual(text!.y + 1);
      // Each operation is headed in words, its operation id beneath.
      for (const id of OPERATIONS) {
        const heading = await page.locator(`section#${id} h3`).innerText();
        expect([id, heading.includes(' '), heading === id]).toEqual([id, true, false]);
        expect(await page.locator(`section#${id} .operation-id`).innerText()).toBe(`Operation ${id}`);
      }
      await nav.getByRole('link', { name: 'Errors' }).click();
      expect(page.url()).toMatch(/#errors$/);
      expect(problems).toEqual([]);
      await page.close();
    }
  });

  it('shows each lookup in JavaScript, Python and the client, and each, run as shown with a real key, prints what the API answers', async () => {
    const { page } = await open('desktop');
    for (const id of ['personByName', 'categoryByNameAndYear', 'search']) {
      const route = ROUTES.find((r) => r.id === id)!;
      const real = await (await fetch(`${local.baseUrl}${examplePath(route, local.key)}`)).json();
      const blocks = page.locator(`section#${id} pre.code`);
      expect(await blocks.count()).toBe(3);
      const [js, python, client] = await blocks.evaluateAll((pres) => pres.map((p) => p.textContent ?? ''));
      const withKey = (code: string) => {
        expect(code).toContain(local.baseUrl);
        return code.replaceAll('YOUR_KEY', local.key);
      };
      const printed = async (command: string, args: string[]) =>
        JSON.parse((await run(command, args, { cwd: ROOT })).stdout);
      expect([id, 'fetch', await printed(NODE_24, ['--input-type=module', '-e', withKey(js)])]).toEqual([
        id,
        'fetch',
        real,
      ]);
      expect([id, 'python', await printed('python3', ['-c', withKey(python)])]).toEqual([id, 'python', real]);
      // The client as the package ships it is built from src/client/client.ts: the example runs against that file.
      const local_client = withKey(client).replace(
        "'film-awards-archive-client'",
        `'${pathToFileURL(path.join(ROOT, 'src/client/client.ts')).href}'`,
      );
      expect([id, 'client', await printed(NODE_24, ['--input-type=module', '-e', local_client])]).toEqual([
        id,
        'client',
        real,
      ]);
    }
    await page.close();
  });

  it('still gives JSON clients the JSON description at /', async () => {
    const response = await fetch(`${local.baseUrl}/`, { headers: { accept: 'application/json' } });
    expect(response.headers.get('content-type')).toContain('application/json');
    const description = (await response.json()) as { endpoints: { operationId: string }[] };
    expect(description.endpoints.map((e) => e.operationId)).toEqual(ROUTES.map((r) => r.id));
  });
});
