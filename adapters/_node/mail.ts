/**
 * The Node-only mail transports, and the mailer npm start, the Netlify portal
 * function and dev:netlify use. SMTP with nodemailer when SMTP_URL is set
 * (`smtp://user:pass@host:587`, `smtps://…:465`, or `smtp://127.0.0.1:2525`
 * for a local relay without TLS). Without a transport, a local outbox for
 * development: each mail is printed to the console and written to a
 * git-ignored folder (data/mail/), so the developer can open the link.
 * Those mails hold a live sign-in link, which is the point: never use the
 * outbox where others read the console. The HTTP e-mail API (MAIL_API_URL),
 * which every runtime can use, and the choice between them are src/portal/mail.ts.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { chooseMailer, type Mail, type Mailer } from '../../src/portal/mail.ts';

function smtpMailer(smtpUrl: string, from: string): Mailer {
  let url: URL;
  try {
    url = new URL(smtpUrl);
  } catch {
    throw new RangeError(`Expected SMTP_URL to be a URL like smtp://user:pass@host:587, got one that does not parse`);
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:')
    throw new RangeError(`Expected SMTP_URL to start with smtp:// or smtps://, got ${url.protocol}//`);
  const transport = nodemailer.createTransport({
    url: smtpUrl,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  });
  return {
    send: async (mail) => {
      await transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
    },
    describe: `SMTP ${url.protocol}//${url.host}`,
    close: () => transport.close(),
  };
}

function outboxMailer(outbox: string, from: string, print: (text: string) => void): Mailer {
  return {
    send: async (mail: Mail) => {
      const text = `From: ${from}\nTo: ${mail.to}\nSubject: ${mail.subject}\n\n${mail.text}`;
      await mkdir(outbox, { recursive: true, mode: 0o700 });
      const file = path.join(
        outbox,
        `${new Date().toISOString().replaceAll(':', '-')}-${randomBytes(4).toString('hex')}.txt`,
      );
      await writeFile(file, text, { mode: 0o600 });
      print(`\n--- mail (no MAIL_API_URL or SMTP_URL set; also in ${file}) ---\n${text}--- end of mail ---\n`);
    },
    describe: `no MAIL_API_URL or SMTP_URL: mails are printed here and written to ${outbox}`,
    close: () => {},
  };
}

/**
 * The mailer the environment asks for (src/portal/mail.ts: MAIL_API_URL, else
 * SMTP_URL), else the outbox in `outbox` when given; null without either.
 * A setting that cannot work is a RangeError with one line saying why.
 */
export function nodeMailer(
  env: Record<string, string | undefined>,
  outbox?: string,
  print = (text: string) => void process.stdout.write(text),
): Mailer | null {
  return chooseMailer(env, {
    smtp: smtpMailer,
    outbox: outbox ? (from) => outboxMailer(outbox, from, print) : undefined,
  });
}
