/**
 * The key portal's endpoints on Netlify: a Functions v2 handler (Node) around
 * the same portal core the local server mounts, with keys in the site's
 * Netlify Blobs store. The page itself (/portal) is a static file.
 */
import { createPortal } from '../../src/portal.ts';
import { portalKeys } from '../../src/keys-blobs.ts';

/** What this function reads of Netlify's context (the full type is `Context` from `@netlify/functions`). */
interface PortalContext {
  ip: string;
}

const portal = createPortal({
  keys: portalKeys(),
  issueLimitPerMinute: process.env.PORTAL_ISSUE_LIMIT_PER_MINUTE ? Number(process.env.PORTAL_ISSUE_LIMIT_PER_MINUTE) : undefined,
  log: (line) => console.log(line),
});

export default (request: Request, context: PortalContext): Promise<Response> => portal.handle(request, context.ip);

export const config = {
  path: ['/portal/keys', '/portal/keys/*'],
};
