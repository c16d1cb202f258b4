/**
 * The key portal as a Netlify Function (Node): keys, sign-in tokens and
 * sessions in the site's Blobs store, the sign-in mail over an HTTP e-mail
 * API or SMTP. netlify/functions/portal.mts is the entry Netlify finds, with
 * the paths it serves; the page itself (/portal) is a static file.
 *
 * Environment: MAIL_API_URL with MAIL_API_TOKEN, or SMTP_URL (without either,
 * sign-in answers 503 rather than print live links into the function log;
 * MAIL_API_URL without its token stops the function from loading, with the
 * reason in its log), MAIL_FROM, PUBLIC_BASE_URL (where mailed links point;
 * default the request's origin, which Netlify routes by host),
 * PORTAL_ISSUE_LIMIT_PER_MINUTE (default 5). PORTAL_DEV_OUTBOX: set only by
 * `npm run dev:netlify` on a developer's machine; never on a deploy.
 */
import { purgeCache } from '@netlify/functions';
import { guardedPurge, purgeKeys } from '../src/http/cache.ts';
import { createApi } from '../src/api/handler.ts';
import { portalKeys } from './_netlify/blobs-keys.ts';
import { noTransport } from '../src/portal/mail.ts';
import { issueLimitFrom } from '../src/portal/portal.ts';
import { nodeMailer } from './_node/mail.ts';

const mailer = nodeMailer(process.env, process.env.PORTAL_DEV_OUTBOX || undefined);
const keys = portalKeys();
// A revoke or rotate purges the key's Netlify-Cache-Tag from the CDN (both rounds awaited: a function
// may be frozen once it has answered); npm run dev:netlify has no CDN and says what it would purge.
const purge = guardedPurge(
  () => (process.env.PORTAL_DEV_OUTBOX ? undefined : (tags) => purgeCache({ tags })),
  'Netlify CDN',
  (line) => console.log(line),
);
const api = createApi({
  keys,
  log: (line) => console.log(line),
  portal: {
    keys,
    sendMail: mailer ? mailer.send : noTransport,
    purgeKeys: (ids) => purgeKeys(purge, ids, (line) => console.error(line)),
    publicBaseUrl: process.env.PUBLIC_BASE_URL || undefined,
    issueLimitPerMinute: issueLimitFrom(process.env.PORTAL_ISSUE_LIMIT_PER_MINUTE),
  },
});

export default (request: Request, context: { ip: string }): Promise<Response> =>
  api.handle(request, undefined, context.ip);
