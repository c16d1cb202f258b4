/**
 * npm run lint:openapi: lints the built OpenAPI document (dist/openapi.json,
 * or DIST_DIR's) with Redocly and then Spectral, each with this repository's
 * rules (redocly.yaml, .spectral.yaml); exit 0 only when both pass.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { commandLine, type Refuse, refuser } from '../build/command-line.ts';
import { DIST, ROOT } from './paths.ts';

const USAGE = `usage: npm run lint:openapi

Lints the built OpenAPI document, dist/openapi.json (or DIST_DIR/openapi.json),
with Redocly (rules in redocly.yaml) and then Spectral (rules in .spectral.yaml).
Build first (npm run build). Exit 0 when both pass, 1 when either finds a problem.

Options:
  -h, --help   this text`;

const refuse: Refuse = refuser('lint:openapi');
commandLine({ name: 'lint:openapi', usage: USAGE, options: {} });
const document = path.join(DIST, 'openapi.json');
if (!existsSync(document)) refuse(`no ${path.relative(ROOT, document) || document}: run npm run build first`);
const bin = (name: string) => path.join(ROOT, 'node_modules/.bin', name);
for (const [tool, args] of [['redocly', ['lint', document]], ['spectral', ['lint', document]]] as const) {
  const run = spawnSync(bin(tool), [...args], { cwd: ROOT, stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
