/**
 * Preloaded by `npm run build` (`node --import`): Node keeps the compiled
 * form of every module it loads after this, TypeScript's stripped types
 * included, in its cache folder (under the system's temporary folder), so a
 * later run loads the build's modules in a tenth of the time (about 0.3 s
 * saved of a 3 s rebuild). Node checks each entry against its file; a stale
 * or missing cache only costs that time back.
 *
 * JavaScript, not TypeScript: it is loaded before the cache is on, so as
 * TypeScript it had its types stripped on every run, which loads Node's
 * type stripper (about 0.1 s) that every cached module then spares.
 */
import module from 'node:module';

module.enableCompileCache?.();
