/**
 * The Worker's one-function sha256 (adapters/_cloudflare/sha256.ts) gives
 * every secret the hash the core's `hashSecret` (@noble/hashes) gives it,
 * and Node's: the key stores hold those hashes, so a Worker hashing a key
 * otherwise would refuse every key. Lengths around each padding boundary,
 * several blocks, and text outside ASCII (hashed as UTF-8); the Worker's
 * key check through it.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../adapters/_cloudflare/sha256.ts';
import { generateKey, generateSession, generateToken, hashSecret } from '../../src/keys/secrets.ts';
import { Keys } from '../../src/keys/rules.ts';
import { SqliteKeyBackend } from '../../src/keys/stores/sqlite.node.ts';

const node = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe("the Worker's sha256", () => {
  it('gives the known digests of the standard test messages', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
  });

  it('hashes every length from 0 to 300 bytes as hashSecret and Node do (each padding boundary, several blocks)', () => {
    for (let n = 0; n <= 300; n++) {
      const text = Array.from({ length: n }, (_, i) => String.fromCharCode(33 + ((i * 7 + n) % 90))).join('');
      expect(sha256Hex(text), `length ${n}`).toBe(hashSecret(text));
      expect(sha256Hex(text), `length ${n}`).toBe(node(text));
    }
  });

  it('hashes text outside ASCII as its UTF-8 bytes, lone surrogates as TextEncoder writes them', () => {
    for (const text of ['é', 'Zoë Saldaña', '日本語のキー', '🎬'.repeat(20), 'a\u0000b', '\ud800x', 'x\udfff']) {
      expect(sha256Hex(text), text).toBe(hashSecret(text));
    }
  });

  it('hashes keys, sign-in tokens and sessions as the stores hold them', () => {
    for (let i = 0; i < 200; i++) {
      for (const secret of [generateKey(), generateToken(), generateSession()])
        expect(sha256Hex(secret)).toBe(hashSecret(secret));
    }
  });

  it('checks keys the core issued when the key store is given it', async () => {
    const backend = new SqliteKeyBackend(':memory:');
    const key = await new Keys(backend).issue('worker-sha256@example.org');
    const keys = new Keys(backend, Date.now, undefined, sha256Hex);
    expect(await keys.verify(key)).toBe(true);
    expect(await keys.verify(`${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`)).toBe(false);
    await keys.revokeKey(key);
    expect(await new Keys(backend).verify(key)).toBe(false);
  });
});
