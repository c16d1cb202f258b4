/**
 * npm run --silent keys -- issue <email> | rotate <key> | revoke <key> | list
 *
 * Works on the local key file (KEYS_FILE, default data/keys.json) that
 * `npm start` reads; a running server sees changes within seconds.
 */
import path from 'node:path';
import { Keys, KeyError } from '../src/keys.ts';
import { FileKeyBackend } from '../src/server/file-keys.node.ts';
import { ROOT } from './source.ts';

const USAGE = 'usage: npm run --silent keys -- issue <email> | rotate <key> | revoke <key> | list';

export async function keysCli(argv: string[], file: string, out = console.log, err = console.error): Promise<number> {
  const keys = new Keys(new FileKeyBackend(file));
  const [command, arg, ...rest] = argv;
  try {
    if (command === 'issue' && arg && !rest.length) out(await keys.issue(arg));
    else if (command === 'rotate' && arg && !rest.length) out(await keys.rotate(arg));
    else if (command === 'revoke' && arg && !rest.length) {
      await keys.revoke(arg);
      err('revoked');
    } else if (command === 'list' && !arg) {
      for (const r of await keys.list()) out(`${r.id}…\t${r.email}\t${r.created}\t${r.revoked ? `revoked ${r.revoked}` : 'active'}`);
    } else {
      err(USAGE);
      return 2;
    }
    return 0;
  } catch (error) {
    if (error instanceof KeyError) {
      err(`keys: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  process.exitCode = await keysCli(process.argv.slice(2), path.resolve(process.env.KEYS_FILE ?? path.join(ROOT, 'data/keys.json')));
}
