/**
 * Sending the portal's sign-in mail on Node (the server and the Netlify
 * portal function): over SMTP with nodemailer when SMTP_URL is set
 * (`smtp://user:pass@host:587`, `smtps://…:465`, or `smtp://127.0.0.1:2525`
 * for a local relay without TLS), from MAIL_FROM. Without SMTP_URL, a local
 * outbox for development: each mail is printed to the console and written to
 * a git-ignored folder (data/mail/), so the developer can open the link.
 * Those mails hold a live sign-in link, which is the point: never use the
 * outbox where others read the console.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { Mail, SendMail } from '../portal.ts';

export const DEFAULT_FROM = 'Film Awards Archive API <no-reply@localhost>';

export interface Mailer {
  send: SendMail;
  /** Where mail goes, for the start-up message (never the SMTP password). */
  describe: string;
  close(): void;
}

export interface MailerOptions {
  /** SMTP_URL; without it, the local outbox. */
  smtpUrl?: string;
  /** MAIL_FROM. */
  from?: string;
  /** The outbox folder when there is no SMTP_URL. */
  outbox?: string;
  /** Where the outbox prints each mail; default stdout. */
  print?: (text: string) => void;
}

function smtpMailer(smtpUrl: string, from: string): Mailer {
  let url: URL;
  try {
    url = new URL(smtpUrl);
  } catch {
    throw new RangeError(`Expected SMTP_URL to be a URL like smtp://user:pass@host:587, got one that does not parse`);
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new RangeError(`Expected SMTP_URL to start with smtp:// or smtps://, got ${url.protocol}//`);
  const transport = nodemailer.createTransport({ url: smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 });
  return {
    send: async (mail) => {
      await transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text });
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
      const file = path.join(outbox, `${new Date().toISOString().replaceAll(':', '-')}-${randomBytes(4).toString('hex')}.txt`);
      await writeFile(file, text, { mode: 0o600 });
      print(`\n--- mail (no SMTP_URL set; also in ${file}) ---\n${text}--- end of mail ---\n`);
    },
    describe: `no SMTP_URL: mails are printed here and written to ${outbox}`,
    close: () => {},
  };
}

export function createMailer(options: MailerOptions): Mailer {
  const from = options.from || DEFAULT_FROM;
  if (options.smtpUrl) return smtpMailer(options.smtpUrl, from);
  if (!options.outbox) throw new Error('Expected SMTP_URL, or an outbox folder for development');
  return outboxMailer(options.outbox, from, options.print ?? ((text) => process.stdout.write(text)));
}
