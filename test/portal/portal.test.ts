/**
 * The portal's JSON endpoints: sign-in by a mailed link (over a real SMTP
 * server in this process), sessions, and issue / rotate / revoke with a
 * session; its limits, its refusals, and its log; in-process over the SQLite
 * store, then on the Node server over HTTP.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portalFiles } from '../../build/site/portal-files.ts';
import { Keys } from '../../src/keys/rules.ts';
import { MAX_BODY_BYTES, SESSION_TTL_MS } from '../../src/shared/limits.ts';
import { PORTAL_MESSAGES } from '../../src/shared/messages.ts';
import { issueLimitFrom, type PortalOptions } from '../../src/portal/portal.ts';
import { nodeMailer } from '../../adapters/_node/mail.ts';
import { createNodeServer, REQUEST_TIMEOUT_MS } from '../../adapters/node.ts';
import { SqliteKeyBackend } from '../../src/keys/stores/sqlite.node.ts';
import { startSmtp, tokenIn, type Smtp } from '../helpers/mail.ts';
import { SAMPLE_SOURCE } from '../helpers/paths.ts';
import { portalFront } from '../helpers/servers.ts';
import { buildInto } from '../helpers/temp.ts';

const ORIGIN = 'https://api.example.org';
let smtp: Smtp;
let sendMail: PortalOptions['sendMail'];
let addresses = 0;
const address = () => `user${++addresses}-${Math.random().toString(36).slice(2, 7)}@example.org`;

beforeAll(async () => {
  smtp = await startSmtp();
  sendMail = nodeMailer({ SMTP_URL: smtp.url, MAIL_FROM: 'Portal <portal@example.org>' })!.send;
});
afterAll(() => smtp?.stop());

function setup(options: Partial<PortalOptions> = {}) {
  const clock = { t: Date.now() };
  const keys = options.keys ?? new Keys(new SqliteKeyBackend(':memory:'), () => clock.t);
  const lines: string[] = [];
  const portal = portalFront({
    sendMail,
    publicBaseUrl: ORIGIN,
    issueLimitPerMinute: 100,
    log: (line) => lines.push(line),
    now: () => clock.t,
    ...options,
    keys,
  });
  return { keys, portal, lines, clock };
}

function post(path: string, body?: unknown, headers: Record<string, string> = {}): Request {
  const hasBody = body !== undefined;
  return new Request(`${ORIGIN}${path}`, {
    method: 'POST',
    headers: { ...(hasBody ? { 'content-type': 'application/json' } : {}), ...headers },
    body: hasBody ? (typeof body === 'string' ? body : JSON.stringify(body)) : undefined,
  });
}

type Portal = ReturnType<typeof setup>['portal'];
async function send(portal: Portal, request: Request, ip = '203.0.113.7') {
  const response = await portal.handle(request, ip);
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: text ? JSON.parse(text) : null };
}

/** Signs `email` in the way a person does: ask, read the mail, open the link. */
async function signIn(portal: Portal, email: string) {
  const before = smtp.count(email);
  expect((await send(portal, post('/portal/sign-in', { email }))).status).toBe(202);
  const token = tokenIn(await smtp.mailTo(email, before));
  const opened = await send(portal, post('/portal/session', { token }));
  expect(opened.status).toBe(200);
  return { ...opened.json, token, bearer: { authorization: `Bearer ${opened.json.session}` } };
}

describe('signing in', () => {
  it('answers 202 with the same body for every well-formed address, whatever its state, and mails a link, in text and HTML', async () => {
    const { portal } = setup();
    const withKey = address();
    await send(portal, post('/portal/keys', undefined, (await signIn(portal, withKey)).bearer));
    const answers = [];
    for (const email of [address(), withKey, address().toUpperCase()])
      answers.push(await send(portal, post('/portal/sign-in', { email })));
    for (const a of answers) expect([a.status, a.json]).toEqual([202, { message: PORTAL_MESSAGES.sent }]);
    const mail = await smtp.mailTo(withKey, 1);
    expect(mail.from).toContain('portal@example.org');
    expect(mail.subject).toMatch(/sign-in link/);
    expect(mail.text).toContain(`${ORIGIN}/portal#token=${tokenIn(mail)}`);
    // The HTML part carries the same link, as a link.
    expect(mail.html).toContain(`<a href="${ORIGIN}/portal#token=${tokenIn(mail)}">`);
  });

  it('links to the request origin when no public base URL is set', async () => {
    const { portal } = setup({ publicBaseUrl: undefined });
    const email = address();
    await send(portal, post('/portal/sign-in', { email }));
    expect((await smtp.mailTo(email)).text).toContain(`${ORIGIN}/portal#token=fat_`);
  });

  it('refuses a malformed address with 400, and a body that is not JSON with 415, 400 or 413', async () => {
    const { portal } = setup();
    for (const email of ['nope', '', 'a@b', 7])
      expect((await send(portal, post('/portal/sign-in', { email }))).json).toEqual({
        error: PORTAL_MESSAGES.badEmail,
      });
    expect((await send(portal, post('/portal/sign-in', '{"email": '))).status).toBe(400);
    expect((await send(portal, post('/portal/sign-in', '[]'))).json).toEqual({ error: PORTAL_MESSAGES.badJson });
    expect(
      (await send(portal, post('/portal/sign-in', { email: 'a@example.org' }, { 'content-type': 'text/plain' })))
        .status,
    ).toBe(415);
    expect(
      (await send(portal, post('/portal/sign-in', { email: 'a@example.org', pad: 'x'.repeat(MAX_BODY_BYTES) }))).status,
    ).toBe(413);
  });

  it('sends at most 5 links in 10 minutes to one address: the sixth gets our 429 with Retry-After', async () => {
    const { portal } = setup();
    const email = address();
    for (let i = 0; i < 5; i++) expect((await send(portal, post('/portal/sign-in', { email }))).status).toBe(202);
    const refused = await send(portal, post('/portal/sign-in', { email }));
    expect(refused.status).toBe(429);
    expect(refused.json).toEqual({
      error: 'Too Many Requests',
      limit: '5 sign-in links per 10 minutes per e-mail address',
      retryAfter: 600,
    });
    expect(refused.headers.get('retry-after')).toBe('600');
  });

  it('refuses an address with a control or format character with 400 and a message saying so, and mails nothing', async () => {
    const { portal } = setup();
    const email = address();
    for (const variant of [
      email.replace('@', '\u0000@'),
      `\u001bc${email}`,
      `${email}\u007f`,
      email.replace('user', 'us\u202eer'),
      email.replace('@', '\u0085@'),
    ]) {
      expect(await send(portal, post('/portal/sign-in', { email: variant }))).toMatchObject({
        status: 400,
        json: { error: PORTAL_MESSAGES.controlInEmail },
      });
    }
    expect(PORTAL_MESSAGES.controlInEmail).toMatch(/^Invalid email: control and format characters .* are not allowed/);
    expect(smtp.count(email.replace('@', '\u0000@').replace('\u0000', ''))).toBe(0);
  });

  it("lets nobody lock an owner out for long: a stranger's links hold it off for 10 minutes at most", async () => {
    const { portal, clock } = setup({ issueLimitPerMinute: 5 });
    const owner = address();
    for (let i = 0; i < 5; i++)
      await send(portal, post('/portal/sign-in', { email: owner.toUpperCase() }), '198.51.100.66');
    expect((await send(portal, post('/portal/sign-in', { email: owner }), '203.0.113.1')).status).toBe(429);
    clock.t += 10 * 60_000;
    expect((await send(portal, post('/portal/sign-in', { email: owner }), '203.0.113.1')).status).toBe(202);
    // The per-client limit stops one client asking for more than 5 a minute, whatever the addresses.
    const many = await Promise.all(
      Array.from({ length: 6 }, () => send(portal, post('/portal/sign-in', { email: address() }), '198.51.100.66')),
    );
    expect(many.map((m) => m.status).sort()).toEqual([202, 202, 202, 202, 202, 429]);
  });

  it('limits sign-ins and new keys per client address (PORTAL_ISSUE_LIMIT_PER_MINUTE), each address on its own', async () => {
    const { portal, clock } = setup({ issueLimitPerMinute: 2 });
    expect((await send(portal, post('/portal/sign-in', { email: address() }), '198.51.100.1')).status).toBe(202);
    expect((await send(portal, post('/portal/sign-in', { email: address() }), '198.51.100.1')).status).toBe(202);
    const refused = await send(portal, post('/portal/sign-in', { email: address() }), '198.51.100.1');
    expect(refused.status).toBe(429);
    expect(refused.json.limit).toBe('2 sign-in links and new keys per minute per client address');
    expect((await send(portal, post('/portal/sign-in', { email: address() }), '198.51.100.2')).status).toBe(202);
    clock.t += 60_000;
    expect((await send(portal, post('/portal/sign-in', { email: address() }), '198.51.100.1')).status).toBe(202);
  });

  it('answers 503 and no 202 when the mail cannot be sent', async () => {
    const { portal, lines } = setup({ sendMail: async () => Promise.reject(new Error('connection refused')) });
    const out = await send(portal, post('/portal/sign-in', { email: address() }));
    expect(out).toMatchObject({ status: 503, json: { error: PORTAL_MESSAGES.mailFailed } });
    expect(lines).toContain('portal mail failed: connection refused');
  });

  it('counts only the mails handed to the transport: after ten failed sends the address still gets its five links', async () => {
    const down = setup({ sendMail: async () => Promise.reject(new Error('connection refused')) });
    const { portal } = setup({ keys: down.keys });
    const email = address();
    for (let i = 0; i < 10; i++) expect((await send(down.portal, post('/portal/sign-in', { email }))).status).toBe(503);
    for (let i = 0; i < 5; i++) expect((await send(portal, post('/portal/sign-in', { email }))).status).toBe(202);
    expect((await send(portal, post('/portal/sign-in', { email }))).status).toBe(429);
  });

  it('reads PORTAL_ISSUE_LIMIT_PER_MINUTE, and says what it expected when the value is wrong', () => {
    expect(issueLimitFrom(undefined)).toBe(5);
    expect(issueLimitFrom('12')).toBe(12);
    expect(() => issueLimitFrom('lots')).toThrow(
      'Expected PORTAL_ISSUE_LIMIT_PER_MINUTE to be a whole number from 1 and up, got "lots"',
    );
  });
});

describe('opening the link', () => {
  it('gives a session for the address and its key state, once; a used, unknown or malformed token is 401', async () => {
    const { portal } = setup();
    const email = address();
    const opened = await signIn(portal, email);
    expect(opened).toMatchObject({ email, key: null, session: expect.stringMatching(/^fas_/) });
    const again = await send(portal, post('/portal/session', { token: opened.token }));
    expect([again.status, again.json]).toEqual([401, { error: PORTAL_MESSAGES.badToken }]);
    expect((await send(portal, post('/portal/session', { token: 'fat_nope' }))).status).toBe(401);
    expect((await send(portal, post('/portal/session', {}))).json).toEqual({ error: PORTAL_MESSAGES.missingToken });
  });

  it('shows the active key by its id and date after signing in again', async () => {
    const { portal } = setup();
    const email = address();
    const { apiKey } = (await send(portal, post('/portal/keys', undefined, (await signIn(portal, email)).bearer))).json;
    const opened = await signIn(portal, email);
    expect(opened.key).toEqual({ id: apiKey.slice(0, 12), createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
  });
});

describe('keys with a session', () => {
  it('issues one key (201, then 409), rotates it (the old one refused at once), revokes it, and issues again', async () => {
    const { portal, keys } = setup();
    const { bearer } = await signIn(portal, address());
    const issued = await send(portal, post('/portal/keys', undefined, bearer));
    expect(issued.status).toBe(201);
    const first = issued.json.apiKey;
    expect(keys.verify(first)).toBe(true);
    expect((await send(portal, post('/portal/keys', undefined, bearer))).json).toEqual({
      error: PORTAL_MESSAGES.hasKey,
    });
    const rotated = await send(portal, post('/portal/keys/rotate', {}, bearer));
    expect(rotated.status).toBe(200);
    expect([keys.verify(first), keys.verify(rotated.json.apiKey)]).toEqual([false, true]);
    const revoked = await send(portal, post('/portal/keys/revoke', undefined, bearer));
    expect([revoked.status, revoked.json]).toEqual([200, { revoked: true }]);
    expect(keys.verify(rotated.json.apiKey)).toBe(false);
    expect((await send(portal, post('/portal/keys/revoke', undefined, bearer))).status).toBe(409);
    expect((await send(portal, post('/portal/keys/rotate', undefined, bearer))).json).toEqual({
      error: PORTAL_MESSAGES.noKey,
    });
    expect((await send(portal, post('/portal/keys', undefined, bearer))).status).toBe(201);
  });

  it('rotates with a grace period: both keys work, the account shows the old one and its end, and "stop the old key now" ends it', async () => {
    const { portal, keys, clock } = setup();
    const email = address();
    const { bearer } = await signIn(portal, email);
    const first = (await send(portal, post('/portal/keys', undefined, bearer))).json.apiKey;
    const rotated = await send(portal, post('/portal/keys/rotate', { grace: '1h' }, bearer));
    const endsAt = new Date(clock.t + 3_600_000).toISOString();
    expect([rotated.status, rotated.json]).toEqual([
      200,
      { apiKey: expect.stringMatching(/^faa_/), ending: { id: first.slice(0, 12), endsAt } },
    ]);
    const second = rotated.json.apiKey;
    expect([keys.verify(first), keys.verify(second)]).toEqual([true, true]);
    const account = await send(portal, post('/portal/account', undefined, bearer));
    expect(account.json).toEqual({
      email,
      key: { id: second.slice(0, 12), createdAt: expect.any(String) },
      ending: { id: first.slice(0, 12), endsAt },
    });
    const ended = await send(portal, post('/portal/keys/end-grace', undefined, bearer));
    expect([ended.status, ended.json]).toEqual([200, { ended: true }]);
    expect([keys.verify(first), keys.verify(second)]).toEqual([false, true]);
    expect((await send(portal, post('/portal/account', undefined, bearer))).json.ending).toBeNull();
    expect((await send(portal, post('/portal/keys/end-grace', undefined, bearer))).json).toEqual({
      error: PORTAL_MESSAGES.noEnding,
    });

    // A choice it does not offer is refused and changes nothing; "now" stops the old key at once.
    for (const grace of ['2h', 3600, '', null]) {
      const bad = await send(portal, post('/portal/keys/rotate', { grace }, bearer));
      expect([bad.status, bad.json]).toEqual([400, { error: PORTAL_MESSAGES.badGrace }]);
    }
    expect((await send(portal, post('/portal/keys/rotate', 'x'.repeat(5000), bearer))).status).toBe(413);
    expect(keys.verify(second)).toBe(true);
    const third = (await send(portal, post('/portal/keys/rotate', { grace: 'now' }, bearer))).json.apiKey;
    expect([keys.verify(second), keys.verify(third)]).toEqual([false, true]);

    // The old key stops on its own at its end; a revoke of the current key stops both.
    const fourth = (await send(portal, post('/portal/keys/rotate', { grace: '24h' }, bearer))).json.apiKey;
    clock.t += 24 * 3_600_000 - 1;
    expect(keys.verify(third)).toBe(true);
    clock.t += 1;
    expect([keys.verify(third), keys.verify(fourth)]).toEqual([false, true]);
    const { bearer: fresh } = await signIn(portal, email);
    const fifth = (await send(portal, post('/portal/keys/rotate', { grace: '7d' }, fresh))).json.apiKey;
    expect((await send(portal, post('/portal/keys/revoke', undefined, fresh))).status).toBe(200);
    expect([keys.verify(fourth), keys.verify(fifth)]).toEqual([false, false]);
  });

  it('needs a live session: none, a made-up one, an expired one or an e-mail in the body all get 401', async () => {
    const { portal, clock } = setup();
    const { bearer } = await signIn(portal, address());
    for (const headers of [
      {},
      { authorization: 'Bearer fas_' + 'A'.repeat(43) },
      { authorization: 'Basic abc' },
    ] as Record<string, string>[]) {
      for (const path of ['/portal/keys', '/portal/keys/rotate', '/portal/keys/end-grace', '/portal/keys/revoke']) {
        const out = await send(portal, post(path, { email: 'victim@example.org', apiKey: 'faa_x' }, headers));
        expect([path, out.status, out.json]).toEqual([path, 401, { error: PORTAL_MESSAGES.badSession }]);
      }
    }
    clock.t += SESSION_TTL_MS;
    expect((await send(portal, post('/portal/keys', undefined, bearer))).status).toBe(401);
  });

  it('shows a live session its address and key state (the page after a reload), and signs it out for good', async () => {
    const { portal } = setup();
    const email = address();
    const { bearer } = await signIn(portal, email);
    const { apiKey } = (await send(portal, post('/portal/keys', undefined, bearer))).json;
    const account = await send(portal, post('/portal/account', undefined, bearer));
    expect([account.status, account.json]).toEqual([
      200,
      { email, key: { id: apiKey.slice(0, 12), createdAt: expect.any(String) }, ending: null },
    ]);
    const out = await send(portal, post('/portal/sign-out', undefined, bearer));
    expect([out.status, out.json]).toEqual([200, { signedOut: true }]);
    for (const path of ['/portal/account', '/portal/sign-out', '/portal/keys/rotate']) {
      const after = await send(portal, post(path, undefined, bearer));
      expect([path, after.status, after.json]).toEqual([path, 401, { error: PORTAL_MESSAGES.badSession }]);
    }
    expect((await send(portal, post('/portal/sign-out', undefined, {}))).status).toBe(401);
  });

  it('counts sign-ins and new keys against the per-client limit, and an owner’s key actions against their own', async () => {
    const { portal } = setup({ issueLimitPerMinute: 2, ownerLimitPerMinute: 4 });
    const { bearer } = await signIn(portal, address()); // issue limit: 1
    expect((await send(portal, post('/portal/keys', undefined, bearer))).status).toBe(201); // issue limit: 2
    // Two walk-throughs of rotate, account and sign-in within a
    // minute: the owner's actions never wait on the sign-in limit.
    expect((await send(portal, post('/portal/keys/rotate', undefined, bearer))).status).toBe(200); // owner: 1
    expect((await send(portal, post('/portal/account', undefined, bearer))).status).toBe(200); // owner: 2
    expect((await send(portal, post('/portal/keys/rotate', undefined, bearer))).status).toBe(200); // owner: 3
    expect((await send(portal, post('/portal/keys/revoke', undefined, bearer))).status).toBe(200); // owner: 4
    const refused = await send(portal, post('/portal/keys/rotate', undefined, bearer));
    expect([refused.status, refused.json.limit]).toEqual([429, '4 key actions per minute per client address']);
    // ... and the sign-in limit is still its own: a new key is refused by it, not by the owner's.
    const another = await send(portal, post('/portal/keys', undefined, bearer));
    expect([another.status, another.json.limit]).toEqual([
      429,
      '2 sign-in links and new keys per minute per client address',
    ]);
  });

  it('counts only signed-in owners against the owner’s limit: posts without a session answer 401 and leave it alone', async () => {
    const { portal } = setup({ ownerLimitPerMinute: 4 });
    const { bearer } = await signIn(portal, address());
    expect((await send(portal, post('/portal/keys', undefined, bearer))).status).toBe(201);
    for (let i = 0; i < 10; i++) {
      for (const path of ['/portal/account', '/portal/sign-out', '/portal/keys/revoke']) {
        const anonymous = await send(
          portal,
          post(path, undefined, i % 2 ? {} : { authorization: `Bearer fas_${'x'.repeat(43)}` }),
        );
        expect([path, anonymous.status]).toEqual([path, 401]);
      }
    }
    expect((await send(portal, post('/portal/account', undefined, bearer))).status).toBe(200);
    expect((await send(portal, post('/portal/keys/revoke', undefined, bearer))).status).toBe(200);
  });

  it('logs method, path, status and time, and never a key, token, session or address', async () => {
    const { portal, lines } = setup();
    const email = address();
    const { bearer, token, session } = await signIn(portal, email);
    const key = (await send(portal, post('/portal/keys', undefined, bearer))).json.apiKey;
    expect(lines.map((l) => l.replace(/\d+ms$/, 'Nms'))).toEqual([
      'POST /portal/sign-in 202 Nms',
      'POST /portal/session 200 Nms',
      'POST /portal/keys 201 Nms',
    ]);
    for (const secret of [key, token, session, email]) expect(lines.join('\n')).not.toContain(secret);
  });
});

describe('request rules', () => {
  it('answers other methods with a 405 and a preflight without granting other origins anything', async () => {
    const { portal } = setup();
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const response = await portal.handle(new Request(`${ORIGIN}/portal/keys/rotate`, { method }), '203.0.113.7');
      expect([method, response.status, response.headers.get('allow')]).toEqual([method, 405, 'POST, OPTIONS']);
    }
    const preflight = await portal.handle(
      new Request(`${ORIGIN}/portal/keys`, {
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example', 'access-control-request-headers': 'authorization' },
      }),
      '203.0.113.7',
    );
    expect(preflight.status).toBe(204);
    for (const name of ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers'])
      expect(preflight.headers.get(name)).toBeNull();
    const ok = await send(portal, post('/portal/sign-in', { email: address() }));
    expect(ok.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers an unknown path under /portal/ with a JSON 404, and leaves the page paths to the rest of the front door', async () => {
    const { portal } = setup();
    for (const path of ['/portal/keys/list', '/portal/keys/faa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'])
      expect((await send(portal, post(path, {}))).json).toEqual({ error: PORTAL_MESSAGES.notFound });
    // The page (/portal, /portal/) is a public file: a POST to it is the API's 405, not the portal's.
    for (const path of ['/portal', '/portal/'])
      expect((await send(portal, post(path, {}))).headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });
});

describe('the portal on the Node server', () => {
  let server: http.Server;
  let base: string;
  let keys: Keys;

  beforeAll(async () => {
    const dist = await buildInto(SAMPLE_SOURCE, 'portal');
    keys = new Keys(new SqliteKeyBackend(':memory:'));
    ({ server } = createNodeServer({ dist, keys, bodyTimeoutMs: 500, portal: { sendMail, issueLimitPerMinute: 100 } }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const postJson = (p: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}${p}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const api = async (key: string) => (await fetch(`${base}/archive/year=1930/apikey=${key}`)).status;

  it('signs in by mail, issues, rotates and revokes over HTTP, and the API follows on the next request', async () => {
    const email = address();
    expect((await postJson('/portal/sign-in', { email })).status).toBe(202);
    const { session } = await (await postJson('/portal/session', { token: tokenIn(await smtp.mailTo(email)) })).json();
    const bearer = { authorization: `Bearer ${session}` };
    const first = (await (await postJson('/portal/keys', undefined, bearer)).json()).apiKey;
    expect(await api(first)).toBe(200);
    const second = (await (await postJson('/portal/keys/rotate', undefined, bearer)).json()).apiKey;
    expect([await api(first), await api(second)]).toEqual([403, 200]);
    expect((await postJson('/portal/keys/revoke', undefined, bearer)).status).toBe(200);
    expect(await api(second)).toBe(403);
  });

  it('refuses a large body sent without a length with a 413, and stays up', async () => {
    const out = await new Promise<number>((resolve) => {
      const req = http.request(
        `${base}/portal/sign-in`,
        { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      req.on('error', () => resolve(-1));
      for (let i = 0; i < 64; i++) req.write('x'.repeat(16 * 1024));
      req.end();
    });
    if (out !== -1) expect(out).toBe(413); // or a reset, depending on timing
    expect((await postJson('/portal/sign-in', { email: address() })).status).toBe(202);
  });

  it('answers 408 and closes the connection when a body arrives too slowly', async () => {
    const socket = net.connect(Number(new URL(base).port), '127.0.0.1');
    let received = '';
    socket.on('data', (c) => (received += c));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write(
      'POST /portal/sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"email":',
    );
    const started = Date.now();
    await closed;
    expect(Date.now() - started).toBeLessThan(3000);
    expect(received).toMatch(/^HTTP\/1\.1 408/);
    expect(received).toContain(PORTAL_MESSAGES.timeout);
    expect(received.toLowerCase()).toContain('connection: close');
  });

  it('cuts off any request whose headers or body take longer than 10 s', () => {
    expect(REQUEST_TIMEOUT_MS).toBeLessThanOrEqual(10_000);
    expect(server.requestTimeout).toBe(REQUEST_TIMEOUT_MS);
    expect(server.headersTimeout).toBe(REQUEST_TIMEOUT_MS);
  });

  it('serves the page, its favicon and leaves POST to API paths to the API (405)', async () => {
    expect((await fetch(`${base}/portal`)).status).toBe(200);
    const slash = await fetch(`${base}/portal/`);
    expect([slash.status, await slash.text()]).toEqual([200, await (await fetch(`${base}/portal`)).text()]);
    const icon = await fetch(`${base}/favicon.svg`);
    expect([icon.status, icon.headers.get('content-type')]).toEqual([200, 'image/svg+xml']);
    const response = await postJson('/archive/apikey=x', {});
    expect([response.status, response.headers.get('allow')]).toEqual([405, 'GET, HEAD, OPTIONS']);
  });
});

describe('the portal page files', () => {
  it('are the page, its style, its script and a favicon, linked by absolute paths', () => {
    const files = portalFiles();
    expect([...files.keys()]).toEqual(['portal.html', 'portal.css', 'portal.js', 'favicon.svg', 'portal/index.html']);
    expect(files.get('portal/index.html')).toEqual(files.get('portal.html'));
    const html = new TextDecoder().decode(files.get('portal.html'));
    for (const link of [
      'href="/portal.css"',
      'src="/portal.js"',
      'href="/favicon.svg"',
      'aria-live="polite"',
      '<label for="email">',
    ])
      expect(html).toContain(link);
  });
});
