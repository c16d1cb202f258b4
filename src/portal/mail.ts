/**
 * Mail for the portal's sign-in links, on any runtime: one `Mailer`
 * interface, the HTTP e-mail API transport (runtime-agnostic, over `fetch`),
 * and the one choice of transport from the environment. The other
 * transports, SMTP and the development outbox, need Node and live in
 * adapters/_node/mail.ts, which hands them to `chooseMailer`.
 *
 * The HTTP API is the shape of Resend's `POST /emails`, which other providers
 * and relays copy: MAIL_API_URL is the whole endpoint, MAIL_API_TOKEN goes as
 * `Authorization: Bearer …`, the body is JSON `{from, to, subject, text, html}`.
 * Anything but a 2xx answer within 10 seconds is a failed send; its error
 * names the endpoint and the status, never the token.
 */

/** One mail as the portal writes it; the mailer adds the sender (MAIL_FROM). */
export interface Mail {
  to: string;
  subject: string;
  text: string;
  /** The same message as HTML, for clients that show it. */
  html?: string;
}
export type SendMail = (mail: Mail) => Promise<void>;

export interface Mailer {
  /** Resolves once the transport took the mail; rejects with a reason (never a secret) otherwise. */
  send: SendMail;
  /** Where mail goes, for the start-up message (never a password or token). */
  describe: string;
  close(): void;
}

export const DEFAULT_FROM = 'Film Awards Archive API <no-reply@localhost>';
/** How long a send over the HTTP API may take before it counts as failed. */
export const MAIL_API_TIMEOUT_MS = 10_000;

/** Where no transport is set on a deploy: sign-in answers 503 rather than print live links into a platform's log. */
export const noTransport: SendMail = async () => {
  throw new Error('neither MAIL_API_URL nor SMTP_URL is set: sign-in mail cannot be sent');
};

export interface HttpMailerOptions {
  url: string;
  token: string;
  from: string;
  timeoutMs?: number;
}

/** MAIL_API_URL as a URL, or a RangeError saying what is expected. */
function apiUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new RangeError(
      'Expected MAIL_API_URL to be the e-mail API endpoint, like https://api.resend.com/emails; got one that does not parse',
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new RangeError(
      `Expected MAIL_API_URL to start with https:// (or http:// for a relay you run), got ${url.protocol}//`,
    );
  if (url.username || url.password)
    throw new RangeError('Expected MAIL_API_URL without a user or password in it: the token goes in MAIL_API_TOKEN');
  return url;
}

/** Sends over an HTTP e-mail API in the shape of Resend's `POST /emails`. */
export function httpMailer(options: HttpMailerOptions): Mailer {
  const url = apiUrl(options.url);
  // A token pasted with its line break would fail every send with a reason that names no setting.
  if (/[\s\p{Cc}]/u.test(options.token))
    throw new RangeError('Expected MAIL_API_TOKEN to be one word, without spaces, line breaks or control characters');
  const timeoutMs = options.timeoutMs ?? MAIL_API_TIMEOUT_MS;
  // Named without the query string, which some relays use for their own secrets.
  const where = `${url.origin}${url.pathname}`;
  return {
    send: async (mail) => {
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${options.token}`,
            'content-type': 'application/json',
            accept: 'application/json',
          },
          body: JSON.stringify({
            from: options.from,
            to: mail.to,
            subject: mail.subject,
            text: mail.text,
            html: mail.html,
          }),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        const timedOut = (error as Error).name === 'TimeoutError';
        throw new Error(
          `the mail API at ${where} ${timedOut ? `did not answer within ${timeoutMs / 1000} s` : 'could not be reached'}`,
        );
      }
      // The answer's body is not read: it is not needed, and an error body might echo what was sent.
      await response.body?.cancel().catch(() => {});
      if (!response.ok) throw new Error(`the mail API at ${where} answered ${response.status}`);
    },
    describe: `HTTP mail API ${where}`,
    close: () => {},
  };
}

/**
 * The transports a runtime can offer beside the HTTP API: SMTP where it
 * can open sockets, the outbox where there is a disk and a developer.
 */
export interface LocalTransports {
  smtp?: (url: string, from: string) => Mailer;
  outbox?: (from: string) => Mailer;
}

/**
 * The mailer the environment asks for: MAIL_API_URL (with MAIL_API_TOKEN) is
 * the HTTP API, else SMTP_URL is SMTP, else the development outbox where the
 * runtime offers one; null when none is set and there is no outbox. A setting
 * that cannot work is a RangeError with one line saying why.
 */
export function chooseMailer(env: Record<string, string | undefined>, transports: LocalTransports = {}): Mailer | null {
  const from = env.MAIL_FROM || DEFAULT_FROM;
  if (env.MAIL_API_URL) {
    if (!env.MAIL_API_TOKEN)
      throw new RangeError(
        'MAIL_API_URL is set but MAIL_API_TOKEN is not: set the e-mail API token, which is sent as a Bearer token',
      );
    return httpMailer({ url: env.MAIL_API_URL, token: env.MAIL_API_TOKEN, from });
  }
  if (env.SMTP_URL) {
    if (!transports.smtp)
      throw new RangeError(
        'SMTP_URL is set, but this runtime cannot speak SMTP: set MAIL_API_URL and MAIL_API_TOKEN instead',
      );
    return transports.smtp(env.SMTP_URL, from);
  }
  return transports.outbox?.(from) ?? null;
}
