/**
 * The key portal's endpoints on Netlify: a Functions v2 handler (Node) around
 * the same portal core the local server mounts, with keys, sign-in tokens and
 * sessions in the site's Netlify Blobs store and the sign-in mail sent over
 * an HTTP e-mail API or SMTP (src/mail.ts). The page itself (/portal) is a
 * static file.
 *
 * Environment: MAIL_API_URL with MAIL_API_TOKEN, or SMTP_URL (one is required
 * for sign-in: without both sign-in answers 503 rather than print live links
 * into the function log; MAIL_API_URL without its token stops the function
 * from loading, with the reason in its log), MAIL_FROM,
 * PUBLIC_BASE_URL (where mailed links point; default the request's origin,
 * which Netlify routes by host), PORTAL_ISSUE_LIMIT_PER_MINUTE (default 5).
 * PORTAL_DEV_OUTBOX: set only by `npm run dev:netlify` on a developer's
 * machine, where without a transport mails go to that folder and the console, as
 * npm start's do; never set it on a deploy.
 */
import { portalKeys } from '../../src/keys-blobs.ts';
import { createPortal, issueLimitFrom } from '../../src/portal.ts';
import { redactLine } from '../../src/redact.ts';
import { nodeMailer } from '../../src/server/mail.node.ts';

/** What this function reads of Netlify's context (the full type is `Context` from `@netlify/functions`). */
interface PortalContext {
  ip: string;
}

const log = (line: string) => console.log(redactLine(line));
const mailer = nodeMailer(process.env, process.env.PORTAL_DEV_OUTBOX || undefined);
const sendMail = mailer
  ? mailer.send
  : async () => {
      throw new Error('neither MAIL_API_URL nor SMTP_URL is set: sign-in mail cannot be sent');
    };

const portal = createPortal({
  keys: portalKeys(),
  sendMail,
  publicBaseUrl: process.env.PUBLIC_BASE_URL || undefined,
  issueLimitPerMinute: issueLimitFrom(process.env.PORTAL_ISSUE_LIMIT_PER_MINUTE),
  log,
});

export default (request: Request, context: PortalContext): Promise<Response> => portal.handle(request, context.ip);

export const config = {
  path: ['/portal/sign-in', '/portal/session', '/portal/keys', '/portal/keys/*', '/portal/account', '/portal/sign-out'],
};
