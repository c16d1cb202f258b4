/** The README's example requests and the answers printed under them. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './paths.ts';

/** Each example of the README: the request path (key placeholder `KEY`) and the answer printed under it. */
export function readmeExamples(readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8')) {
  return [...readme.matchAll(/^ {4}GET (\/\S+)\n {4}(.+)$/gm)].map(([, request, answer]) => ({ request, answer }));
}
