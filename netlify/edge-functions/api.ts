/** Netlify finds edge functions in this folder: the adapter itself is adapters/netlify-edge.ts. */
export { default } from '../../adapters/netlify-edge.ts';
