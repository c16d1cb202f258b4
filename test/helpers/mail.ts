/**
 * A real SMTP server in the test process (the `smtp-server` package): the
 * portal's mail goes out over SMTP with nodemailer exactly as in production,
 * and tests read the mails that arrived, and the sign-in links in them. And a
 * local stand-in for an HTTP e-mail API, which records what it was sent.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  from: string;
  subject: string;
  /** The text part, decoded. */
  text: string;
  /** The HTML part, decoded ('' when the mail has none). */
  html: string;
  raw: string;
}

/** A quoted-printable or plain body as text (nodemailer picks quoted-printable for long lines). */
function decodeBody(headers: string, body: string): string {
  if (!/content-transfer-encoding:\s*quoted-printable/i.test(headers)) return body;
  const bytes = body
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

/** Headers (folded lines joined) and body of a message or MIME part. */
function split(raw: string): { headers: string; body: string } {
  const at = raw.indexOf('\r\n\r\n');
  return { headers: raw.slice(0, at).replace(/\r\n[ \t]+/g, ' '), body: raw.slice(at + 4) };
}

/**
 * The decoded text/plain and text/html parts: a plain mail is all text; a multipart/alternative one has one of each.
 */
function parts(headers: string, body: string): { text: string; html: string } {
  const boundary = /content-type:\s*multipart\/[^;]+;.*boundary="?([^";\r\n]+)"?/i.exec(headers)?.[1];
  if (!boundary) return { text: decodeBody(headers, body), html: '' };
  const found = { text: '', html: '' };
  for (const chunk of body.split(`--${boundary}`).slice(1, -1)) {
    const part = split(chunk.replace(/^\r\n/, '').replace(/\r\n$/, ''));
    const type = /content-type:\s*text\/(plain|html)/i.exec(part.headers)?.[1]?.toLowerCase();
    if (type) found[type === 'plain' ? 'text' : 'html'] = decodeBody(part.headers, part.body);
  }
  return found;
}

function parse(raw: string, to: string[]): ReceivedMail {
  const { headers, body } = split(raw);
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(headers)?.[1] ?? '';
  return { to, from: header('from'), subject: header('subject'), ...parts(headers, body), raw };
}

/** The sign-in token in a mail's link (`/portal#token=...`). */
export function tokenIn(mail: Pick<ReceivedMail, 'text'>): string {
  const m = /\/portal#token=(fat_[A-Za-z0-9_-]{43})/.exec(mail.text);
  if (!m) throw new Error(`no sign-in link in the mail:\n${mail.text}`);
  return m[1];
}

export async function startSmtp() {
  const mails: ReceivedMail[] = [];
  const waiting = new Set<() => void>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push(
          parse(
            Buffer.concat(chunks).toString('latin1'),
            session.envelope.rcptTo.map((r) => r.address),
          ),
        );
        for (const wake of waiting) wake();
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;

  /** The newest mail to `address` after `skip` earlier ones, waiting up to `ms` for it. */
  async function mailTo(address: string, skip = 0, ms = 10_000): Promise<ReceivedMail> {
    const until = Date.now() + ms;
    for (;;) {
      const found = mails.filter((m) => m.to.includes(address.toLowerCase()));
      if (found.length > skip) return found[found.length - 1];
      if (Date.now() > until) throw new Error(`no mail to ${address} within ${ms} ms`);
      await new Promise<void>((resolve) => {
        const wake = () => (waiting.delete(wake), resolve());
        waiting.add(wake);
        setTimeout(wake, 200);
      });
    }
  }

  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    mailTo,
    /** How many mails reached `address` so far. */
    count: (address: string) => mails.filter((m) => m.to.includes(address.toLowerCase())).length,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type Smtp = Awaited<ReturnType<typeof startSmtp>>;

/** One request the stand-in mail API received. */
export interface ApiCall {
  method: string;
  path: string;
  authorization: string;
  contentType: string;
  body: { from?: string; to?: string; subject?: string; text?: string; html?: string };
}

/**
 * A local HTTP server standing in for an e-mail API in the shape of Resend's
 * `POST /emails`: it records every request and answers as `answer` says (a
 * status, or `silent` to never answer), so tests see exactly what was sent.
 */
export async function startMailApi() {
  const calls: ApiCall[] = [];
  const state = { answer: 200 as number | 'silent' };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      calls.push({
        method: req.method ?? '',
        path: req.url ?? '',
        authorization: req.headers.authorization ?? '',
        contentType: req.headers['content-type'] ?? '',
        body: text ? JSON.parse(text) : {},
      });
      if (state.answer === 'silent') return;
      res.writeHead(state.answer, { 'content-type': 'application/json' });
      res.end(state.answer < 300 ? `{"id":"${calls.length}"}` : '{"message":"refused"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/emails`,
    calls,
    /** How the next requests are answered: a status, or `silent` for none at all. */
    answer: (how: number | 'silent') => void (state.answer = how),
    /** The calls to `address` so far. */
    to: (address: string) => calls.filter((c) => c.body.to === address),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type MailApi = Awaited<ReturnType<typeof startMailApi>>;
