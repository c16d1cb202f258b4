/**
 * Sign-in mail through an HTTP e-mail API in the shape of Resend's
 * `POST /emails`, to a local stand-in that records what it received: what
 * is sent (method, path, Bearer token, JSON fields, a link that signs in),
 * what a refusal or silence does (503, nothing counted), which transport the
 * environment picks, and `npm start` sending through it as a real process;
 * the token shows up in no log line and no answer.
 */
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keys } from '../../src/keys/rules.ts';
import { chooseMailer, httpMailer, type Mailer } from '../../src/portal/mail.ts';
import { PORTAL_MESSAGES } from '../../src/shared/messages.ts';
import { nodeMailer } from '../../adapters/_node/mail.ts';
import { SqliteKeyBackend } from '../../src/keys/stores/sqlite.node.ts';
import { startMailApi, type MailApi } from '../helpers/mail.ts';
import { startServer } from '../helpers/processes.ts';
import { portalFront } from '../helpers/servers.ts';
import { cleanCopy, tempDir } from '../helpers/temp.ts';

const ORIGIN = 'https://api.example.org';
const TOKEN = `re_${Math.random().toString(36).slice(2)}SECRET`;
const FROM = 'Portal <portal@example.org>';
let api: MailApi;
let addresses = 0;
const address = () => `api${++addresses}-${Math.random().toString(36).slice(2, 7)}@example.org`;

beforeAll(async () => {
  api = await startMailApi();
});
afterAll(() => api?.stop());

function setup(mailer: Mailer, keys = new Keys(new SqliteKeyBackend(':memory:'))) {
  const lines: string[] = [];
  const portal = portalFront({
    keys,
    sendMail: mailer.send,
    publicBaseUrl: ORIGIN,
    issueLimitPerMinute: 1000,
    log: (line) => lines.push(line),
  });
  const post = async (path: string, body: unknown) => {
    const response = await portal.handle(
      new Request(`${ORIGIN}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
      '203.0.113.9',
    );
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
  return { portal, keys, lines, post };
}

const apiMailer = (timeoutMs?: number) => httpMailer({ url: api.url, token: TOKEN, from: FROM, timeoutMs });
const linkIn = (html: string) =>
  /href="(https:\/\/api\.example\.org\/portal#token=(fat_[A-Za-z0-9_-]{43}))"/.exec(html);

describe('the portal over the HTTP e-mail API', () => {
  it('posts the sign-in mail as JSON with the Bearer token, and the link in it signs in', async () => {
    const { post } = setup(apiMailer());
    const email = address();
    expect((await post('/portal/sign-in', { email })).status).toBe(202);
    const [call] = api.to(email);
    expect(call).toMatchObject({
      method: 'POST',
      path: '/emails',
      authorization: `Bearer ${TOKEN}`,
      contentType: 'application/json',
    });
    expect(Object.keys(call.body).sort()).toEqual(['from', 'html', 'subject', 'text', 'to']);
    expect(call.body).toMatchObject({ from: FROM, to: email, subject: expect.stringMatching(/sign-in link/) });
    const html = linkIn(call.body.html!)!;
    expect(call.body.text).toContain(`\n${html[1]}\n`);
    const opened = await post('/portal/session', { token: html[2] });
    expect(opened.status).toBe(200);
    expect(JSON.parse(opened.text)).toMatchObject({ email, key: null, session: expect.stringMatching(/^fas_/) });
  });

  for (const status of [401, 422, 500, 503]) {
    it(`takes a ${status} from the API as a failed send: 503 with Retry-After, the status logged, the token nowhere`, async () => {
      api.answer(status);
      try {
        const { post, lines } = setup(apiMailer());
        const email = address();
        const out = await post('/portal/sign-in', { email });
        expect([out.status, out.headers.get('retry-after'), JSON.parse(out.text)]).toEqual([
          503,
          '60',
          { error: PORTAL_MESSAGES.mailFailed },
        ]);
        expect(api.to(email)).toHaveLength(1);
        expect(lines).toContain(`portal mail failed: the mail API at ${api.url} answered ${status}`);
        expect([out.text, ...lines].join('\n')).not.toContain(TOKEN);
      } finally {
        api.answer(200);
      }
    });
  }

  it('takes an API that never answers as a failed send once the timeout passes', async () => {
    api.answer('silent');
    try {
      const { post, lines } = setup(apiMailer(300));
      const out = await post('/portal/sign-in', { email: address() });
      expect(out.status).toBe(503);
      expect(lines).toContain(`portal mail failed: the mail API at ${api.url} did not answer within 0.3 s`);
    } finally {
      api.answer(200);
    }
  });

  it('takes an API that cannot be reached as a failed send', async () => {
    // A port that was just free: nothing listens there.
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/emails`;
    await new Promise((resolve) => closed.close(resolve));
    const { post, lines } = setup(httpMailer({ url, token: TOKEN, from: FROM }));
    expect((await post('/portal/sign-in', { email: address() })).status).toBe(503);
    expect(lines).toContain(`portal mail failed: the mail API at ${url} could not be reached`);
  });

  it('counts only mails the API accepted: after ten refused sends the address still gets its five links', async () => {
    const keys = new Keys(new SqliteKeyBackend(':memory:'));
    const { post } = setup(apiMailer(), keys);
    const email = address();
    api.answer(500);
    try {
      for (let i = 0; i < 10; i++) expect((await post('/portal/sign-in', { email })).status).toBe(503);
    } finally {
      api.answer(200);
    }
    for (let i = 0; i < 5; i++) expect((await post('/portal/sign-in', { email })).status).toBe(202);
    expect((await post('/portal/sign-in', { email })).status).toBe(429);
    // The refused mails' links were taken back: only the last five accepted ones sign in.
    const tokens = api.to(email).map((c) => linkIn(c.body.html!)![2]);
    const statuses = [];
    for (const token of tokens) statuses.push((await post('/portal/session', { token })).status);
    expect(statuses).toEqual([...Array(10).fill(401), ...Array(5).fill(200)]);
  });
});

describe('the transport the environment picks', () => {
  const kind = (mailer: Mailer | null) => mailer?.describe.split(' ')[0] ?? null;

  it('is the HTTP API for MAIL_API_URL (before SMTP_URL), SMTP for SMTP_URL, else the outbox where there is one, else none', async () => {
    const dir = await tempDir('mail-choice');
    const outbox = path.join(dir, 'mail');
    expect(
      kind(nodeMailer({ MAIL_API_URL: api.url, MAIL_API_TOKEN: TOKEN, SMTP_URL: 'smtp://127.0.0.1:2525' }, outbox)),
    ).toBe('HTTP');
    expect(kind(nodeMailer({ SMTP_URL: 'smtp://127.0.0.1:2525' }, outbox))).toBe('SMTP');
    expect(nodeMailer({}, outbox)?.describe).toContain(outbox);
    expect(nodeMailer({})).toBeNull();
    expect(chooseMailer({})).toBeNull();
    expect(kind(chooseMailer({ MAIL_API_URL: api.url, MAIL_API_TOKEN: TOKEN }))).toBe('HTTP');
  });

  it('refuses MAIL_API_URL without MAIL_API_TOKEN, a URL or token that cannot work, and SMTP where there is none, each in one line', () => {
    const refusal = (env: Record<string, string>, local = true) => {
      try {
        return String(local ? nodeMailer(env, '/nowhere') : chooseMailer(env));
      } catch (error) {
        return `${(error as Error).name}: ${(error as Error).message}`;
      }
    };
    expect(refusal({ MAIL_API_URL: api.url, SMTP_URL: 'smtp://127.0.0.1:2525' })).toBe(
      'RangeError: MAIL_API_URL is set but MAIL_API_TOKEN is not: set the e-mail API token, which is sent as a Bearer token',
    );
    expect(refusal({ MAIL_API_URL: 'api.resend.com/emails', MAIL_API_TOKEN: TOKEN })).toMatch(
      /^RangeError: Expected MAIL_API_URL to be the e-mail API endpoint/,
    );
    expect(refusal({ MAIL_API_URL: 'ftp://mail.example.org/emails', MAIL_API_TOKEN: TOKEN })).toMatch(
      /^RangeError: Expected MAIL_API_URL to start with https:\/\//,
    );
    expect(refusal({ MAIL_API_URL: 'https://user:pw@mail.example.org/emails', MAIL_API_TOKEN: TOKEN })).toMatch(
      /^RangeError: Expected MAIL_API_URL without a user or password/,
    );
    expect(refusal({ MAIL_API_URL: api.url, MAIL_API_TOKEN: `${TOKEN}\n` })).toBe(
      'RangeError: Expected MAIL_API_TOKEN to be one word, without spaces, line breaks or control characters',
    );
    expect(refusal({ SMTP_URL: 'smtp://127.0.0.1:2525' }, false)).toMatch(
      /^RangeError: SMTP_URL is set, but this runtime cannot speak SMTP/,
    );
    for (const env of [{ MAIL_API_URL: api.url }, { MAIL_API_URL: 'nope', MAIL_API_TOKEN: TOKEN }] as Record<
      string,
      string
    >[])
      expect(refusal(env)).not.toContain(TOKEN);
  });
});

describe('npm start with MAIL_API_URL', () => {
  let clone: string;
  beforeAll(async () => {
    clone = await cleanCopy('mail-api-start');
  });

  it('sends the sign-in mail through the API, names it at start, and never shows the token', async () => {
    const dir = await tempDir('mail-api-start');
    const env = {
      DIST_DIR: path.join(dir, 'dist'),
      KEYS_DB: path.join(dir, 'keys.db'),
      MAIL_API_URL: api.url,
      MAIL_API_TOKEN: TOKEN,
      MAIL_FROM: FROM,
    };
    const server = await startServer(env, { cwd: clone });
    try {
      expect(server.output()).toContain(`mail: HTTP mail API ${api.url}`);
      const post = (path: string, body: unknown) =>
        fetch(`${server.base}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const email = address();
      expect((await post('/portal/sign-in', { email })).status).toBe(202);
      const [call] = api.to(email);
      expect(call).toMatchObject({
        method: 'POST',
        path: '/emails',
        authorization: `Bearer ${TOKEN}`,
        body: { from: FROM, to: email },
      });
      const link = /(http:\/\/127\.0\.0\.1:\d+)\/portal#token=(fat_[A-Za-z0-9_-]{43})/.exec(call.body.text!)!;
      expect(link[1]).toBe(server.base);
      expect((await post('/portal/session', { token: link[2] })).status).toBe(200);
      api.answer(500);
      const refused = await post('/portal/sign-in', { email: address() }).finally(() => api.answer(200));
      expect([refused.status, refused.headers.get('retry-after')]).toEqual([503, '60']);
      expect(await refused.text()).not.toContain(TOKEN);
    } finally {
      await server.stop();
    }
    expect(server.output()).toContain(`portal mail failed: the mail API at ${api.url} answered 500`);
    expect(server.output()).not.toContain(TOKEN);
  });

  it('refuses to start, in one line, with MAIL_API_URL and no MAIL_API_TOKEN', async () => {
    const dir = await tempDir('mail-api-refuse');
    const started = startServer(
      { DIST_DIR: path.join(dir, 'dist'), KEYS_DB: path.join(dir, 'keys.db'), MAIL_API_URL: api.url },
      { cwd: clone },
    );
    const error = String(
      await started.then(
        (s) => s.stop().then(() => 'started'),
        (e: Error) => e.message,
      ),
    );
    expect(error.split('\n').filter(Boolean)).toEqual([
      'cli/start.ts exited 1:',
      'npm start: MAIL_API_URL is set but MAIL_API_TOKEN is not: set the e-mail API token, which is sent as a Bearer token',
    ]);
  });
});
