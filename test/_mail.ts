/**
 * A real SMTP server in the test process (the `smtp-server` package): the
 * portal's mail goes out over SMTP with nodemailer exactly as in production,
 * and tests read the mails that arrived, and the sign-in links in them.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  from: string;
  subject: string;
  /** The text part, decoded. */
  text: string;
  raw: string;
}

/** A quoted-printable or plain body as text (nodemailer picks quoted-printable for long lines). */
function decodeBody(headers: string, body: string): string {
  if (!/content-transfer-encoding:\s*quoted-printable/i.test(headers)) return body;
  const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

function parse(raw: string, to: string[]): ReceivedMail {
  const at = raw.indexOf('\r\n\r\n');
  const headers = raw.slice(0, at).replace(/\r\n[ \t]+/g, ' ');
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(headers)?.[1] ?? '';
  return { to, from: header('from'), subject: header('subject'), text: decodeBody(headers, raw.slice(at + 4)), raw };
}

/** The sign-in token in a mail's link (`/portal#token=...`). */
export function tokenIn(mail: ReceivedMail): string {
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
        mails.push(parse(Buffer.concat(chunks).toString('latin1'), session.envelope.rcptTo.map((r) => r.address)));
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
