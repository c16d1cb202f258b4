/**
 * npm run lint:openapi: lints the built OpenAPI document (dist/openapi.json,
 * or DIST_DIR's) with Redocly's recommended rules (redocly.yaml): its `struct`
 * rule checks the document against OpenAPI 3.1, the others its references,
 * path parameters, operation ids and examples against their schemas. Exit 0
 * only when it passes. test/build/openapi.test.ts runs the same lint.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { commandLine, type Refuse, refuser } from '../lib/command-line.ts';
import { DIST, ROOT } from './lib/paths.ts';

const USAGE = `usage: npm run lint:openapi

Lints the built OpenAPI document, dist/openapi.json (or DIST_DIR/openapi.json),
with Redocly's recommended rules (redocly.yaml), which include validation
against the OpenAPI 3.1 schema. Build first (npm run build). Exit 0 when it
passes, 1 when it finds a problem.

Options:
  -h, --help   this text`;

const refuse: Refuse = refuser('lint:openapi');
commandLine({ name: 'lint:openapi', usage: USAGE, options: {} });
const document = path.join(DIST, 'openapi.json');
if (!existsSync(document)) refuse(`no ${path.relative(ROOT, document) || document}: run npm run build first`);
const run = spawnSync(path.join(ROOT, 'node_modules/.bin/redocly'), ['lint', document], {
  cwd: ROOT,
  stdio: 'inherit',
  env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
});
process.exit(run.status ?? 1);
