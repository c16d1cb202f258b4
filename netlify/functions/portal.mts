/** Netlify finds functions, and reads their paths, in this folder: the adapter itself is adapters/netlify-portal.ts. */
export { default } from '../../adapters/netlify-portal.ts';

export const config = {
  path: ['/portal/sign-in', '/portal/session', '/portal/keys', '/portal/keys/*', '/portal/account', '/portal/sign-out'],
};
