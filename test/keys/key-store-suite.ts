/**
 * One behaviour and race suite for every key backend (SQLite and Netlify
 * Blobs in key-stores.test.ts, Cloudflare D1 in keys-d1.test.ts): sign-in
 * tokens, sessions, the per-address sign-in limit (only links sent count), one
 * active key per address, rotation and revocation, each also with many calls
 * at once through two separate store instances (two processes, or two
 * function or Worker instances, sharing one store).
 */
import { describe, expect, it } from 'vitest';
import { KeyError } from '../../src/keys/contract.ts';
import { GRACE_PERIODS, Keys } from '../../src/keys/rules.ts';
import { SESSION_TTL_MS, SIGN_INS_PER_WINDOW, SIGN_IN_WINDOW_MS, TOKEN_TTL_MS } from '../../src/shared/limits.ts';

/** Two `Keys` over one store, with a clock the test moves. */
export interface StorePair {
  a: Keys;
  b: Keys;
  clock: { t: number };
  /**
   * Lets each instance see the other's writes (SQLite: what its 250 ms poll does;
   * PostgreSQL: the notifications sent so far are taken in; Blobs: nothing to do).
   */
  settle(): void | Promise<void>;
}

const status = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok',
    (error: unknown) => (error instanceof KeyError ? error.status : `${error}`),
  );
let counter = 0;
const address = (tag: string) => `${tag}-${++counter}-${Math.random().toString(36).slice(2, 8)}@example.org`;

async function signedIn(keys: Keys, email: string): Promise<string> {
  const { token } = await keys.signIn(email);
  return (await keys.openSession(token)).session;
}

export function keyStoreSuite(name: string, make: () => StorePair | Promise<StorePair>) {
  let current: StorePair;
  const open = async () => (current = await make());
  /** Whether a key works, asked once every instance has seen every write. */
  const works = async (keys: Keys, key: string) => {
    await current.settle();
    return keys.verify(key);
  };

  describe(`the ${name} key store`, () => {
    it('opens one session per sign-in link, for the address it was sent to, and refuses the link a second time', async () => {
      const { a, b } = await open();
      const email = address('link');
      const { token } = await a.signIn(email.toUpperCase());
      expect(token).toMatch(/^fat_[A-Za-z0-9_-]{43}$/);
      const opened = await b.openSession(token);
      expect(opened).toMatchObject({ email, key: null });
      expect(opened.session).toMatch(/^fas_[A-Za-z0-9_-]{43}$/);
      expect(await a.sessionEmail(opened.session)).toBe(email);
      expect(await status(a.openSession(token))).toBe(401);
      expect(await status(a.openSession('fat_' + 'A'.repeat(43)))).toBe(401);
    });

    it('ends a session on sign-out, for every instance, leaving the address’s other sessions and its key alone', async () => {
      const { a, b, settle } = await open();
      const email = address('sign-out');
      const session = await signedIn(a, email);
      const other = await signedIn(b, email);
      const key = await a.issue(email);
      expect(await b.account(session)).toEqual({
        email,
        key: { id: key.slice(0, 12), createdAt: expect.any(String) },
        ending: null,
      });
      await b.signOut(session);
      await settle();
      expect([
        await status(a.sessionEmail(session)),
        await status(a.account(session)),
        await status(a.signOut(session)),
      ]).toEqual([401, 401, 401]);
      expect(await a.sessionEmail(other)).toBe(email);
      expect(await works(a, key)).toBe(true);
      expect(await status(a.signOut('fas_' + 'A'.repeat(43)))).toBe(401);
    });

    it('refuses a link after 15 minutes and a session after an hour', async () => {
      const { a, clock } = await open();
      const email = address('expiry');
      const old = await a.signIn(email);
      clock.t += TOKEN_TTL_MS;
      expect(await status(a.openSession(old.token))).toBe(401);
      const { session } = await a.openSession((await a.signIn(email)).token);
      clock.t += SESSION_TTL_MS - 1;
      expect(await a.sessionEmail(session)).toBe(email);
      clock.t += 1;
      expect(await status(a.sessionEmail(session))).toBe(401);
    });

    it(`sends at most ${SIGN_INS_PER_WINDOW} links in ${SIGN_IN_WINDOW_MS / 60_000} minutes to one address, and says when to ask again`, async () => {
      const { a, b, clock } = await open();
      const email = address('limit');
      for (let i = 0; i < SIGN_INS_PER_WINDOW; i++) {
        await (i % 2 ? a : b).signIn(email);
        clock.t += 60_000;
      }
      const refused = await a.signIn(email).catch((e: KeyError) => e);
      expect(refused).toMatchObject({ status: 429, retryAfter: SIGN_IN_WINDOW_MS / 1000 - SIGN_INS_PER_WINDOW * 60 });
      expect(await status(a.signIn(address('other')))).toBe('ok');
      clock.t += SIGN_IN_WINDOW_MS - SIGN_INS_PER_WINDOW * 60_000 + 1;
      expect(await status(a.signIn(email))).toBe('ok');
    });

    it('counts only the links whose mail was handed over: a failed send neither works nor uses up the limit', async () => {
      const { a, b } = await open();
      const email = address('unsent');
      const tokens: string[] = [];
      const failing = async (_to: string, token: string) => {
        tokens.push(token);
        throw new Error('SMTP down');
      };
      for (let i = 0; i < 2 * SIGN_INS_PER_WINDOW; i++)
        expect(await status(a.signIn(email, failing))).toBe('Error: SMTP down');
      for (const token of tokens) expect(await status(b.openSession(token))).toBe(401);
      for (let i = 0; i < SIGN_INS_PER_WINDOW; i++)
        expect(await status((i % 2 ? a : b).signIn(email, async () => {}))).toBe('ok');
      expect(await status(a.signIn(email))).toBe(429);
    });

    it('counts an address however it is written: case, spaces and Unicode composition make no new address', async () => {
      const { a, b } = await open();
      const tag = address('same');
      const [local, domain] = tag.split('@');
      const forms = [
        tag,
        ` ${tag} `,
        `${local}@${domain.toUpperCase()}`,
        `${local.toUpperCase()}@${domain}`,
        `${local}\u00e9@${domain}`,
        `${local}e\u0301@${domain}`,
      ];
      for (const email of forms.slice(0, 4)) await a.signIn(email);
      await b.signIn(forms[4]); // é, composed: another address, counted on its own
      expect((await a.signIn(forms[5])).email).toBe(forms[4]); // e + combining acute: the same as é
      expect(await status(b.signIn(forms[1]))).toBe('ok'); // the fifth for the first address
      expect(await status(b.signIn(forms[2]))).toBe(429);
    });

    it('refuses an address holding a control or format character, with 400, and stores nothing for it', async () => {
      const { a } = await open();
      const [local, domain] = address('ctl').split('@');
      for (const c of [
        '\u0000',
        '\u001b',
        '\u007f',
        '\u0085',
        '\u200b',
        '\u202e',
        '\u2028',
        '\u2029',
        '\ufeff',
        '\u00ad',
      ]) {
        const refused = await a.signIn(`${local.slice(0, 2)}${c}${local.slice(2)}@${domain}`).catch((e: KeyError) => e);
        expect(refused).toMatchObject({ status: 400, message: expect.stringMatching(/control and format characters/) });
        expect(await status(a.issue(`${local}@${domain}${c}`))).toBe(400);
      }
      for await (const r of a.list()) expect(r.email).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u);
    });

    it('keeps one active key per address: issue once, rotate, revoke, issue again', async () => {
      const { a, b } = await open();
      const email = address('life');
      const first = await a.issue(email);
      expect(await works(a, first)).toBe(true);
      expect(await status(b.issue(email))).toBe(409);
      expect(await a.activeKey(email)).toMatchObject({ id: first.slice(0, 12) });
      const second = await b.rotate(email).then((r) => r.key);
      expect([await works(a, first), await works(a, second), await works(b, second)]).toEqual([false, true, true]);
      await a.revoke(email);
      expect(await works(b, second)).toBe(false);
      expect(await status(a.revoke(email))).toBe(409);
      expect(await status(a.rotate(email).then((r) => r.key))).toBe(409);
      expect(await a.activeKey(email)).toBeNull();
      expect(await works(b, await b.issue(email))).toBe(true);
    });

    it('rotates and revokes a given key only while it is the active one (the CLI)', async () => {
      const { a, b } = await open();
      const email = address('cli');
      const key = await a.issue(email);
      const next = await b.rotateKey(key).then((r) => r.key);
      expect(await status(a.rotateKey(key).then((r) => r.key))).toBe(403);
      expect(await status(a.revokeKey(key))).toBe(403);
      await a.revokeKey(next);
      expect(await works(a, next)).toBe(false);
      expect(await status(a.rotateKey('not-a-key').then((r) => r.key))).toBe(403);
    });

    it('rotates with a grace period: both keys work until its end, then the old one is refused without any write', async () => {
      const { a, b, clock } = await open();
      const email = address('grace');
      const old = await a.issue(email);
      const session = await signedIn(b, email);
      const next = await b.rotate(email, GRACE_PERIODS['1h']).then((r) => r.key);
      const endsAt = new Date(clock.t + GRACE_PERIODS['1h']).toISOString();
      expect([await works(a, old), await works(a, next), await works(b, old)]).toEqual([true, true, true]);
      expect(await a.account(session)).toEqual({
        email,
        key: { id: next.slice(0, 12), createdAt: expect.any(String) },
        ending: { id: old.slice(0, 12), endsAt },
      });
      expect(await status(a.rotateKey(old).then((r) => r.key))).toBe(403); // only the current key rotates
      clock.t += GRACE_PERIODS['1h'] - 1;
      expect(await works(b, old)).toBe(true);
      clock.t += 1;
      expect([await works(a, old), await works(b, old), await works(a, next)]).toEqual([false, false, true]);
      expect(await b.endingKey(email)).toBeNull();
      expect(await status(a.revokeKey(old))).toBe(403);
      expect(await status(a.endGrace(email))).toBe(409);
    });

    it('ends a grace period early: "stop the old key now", revoke of the old key, revoke of the current key', async () => {
      const { a, b } = await open();
      const email = address('end-grace');
      const first = await a.issue(email);
      const second = await a.rotate(email, GRACE_PERIODS['24h']).then((r) => r.key);
      await b.endGrace(email);
      expect([await works(a, first), await works(a, second)]).toEqual([false, true]);
      expect(await a.endingKey(email)).toBeNull();
      expect(await status(a.endGrace(email))).toBe(409);
      const third = await b.rotateKey(second, GRACE_PERIODS['7d']).then((r) => r.key);
      expect(await works(a, second)).toBe(true);
      await a.revokeKey(second); // the CLI's revoke, on the key in its grace period
      expect([await works(b, second), await works(b, third)]).toEqual([false, true]);
      const fourth = await a.rotate(email, GRACE_PERIODS['1h']).then((r) => r.key);
      await b.revoke(email); // the current key: both stop
      expect([await works(a, third), await works(a, fourth)]).toEqual([false, false]);
      expect(await a.endingKey(email)).toBeNull();
    });

    it('keeps at most one key in its grace period: rotating again ends the one in grace now, and "now" ends the old key at once', async () => {
      const { a, b, clock } = await open();
      const email = address('one-grace');
      const first = await a.issue(email);
      clock.t += 1000;
      const second = await a.rotate(email, GRACE_PERIODS['7d']).then((r) => r.key);
      clock.t += 1000;
      const third = await b.rotate(email, GRACE_PERIODS['1h']).then((r) => r.key);
      expect([await works(a, first), await works(a, second), await works(a, third)]).toEqual([false, true, true]);
      expect(await a.endingKey(email)).toEqual({
        id: second.slice(0, 12),
        endsAt: new Date(clock.t + GRACE_PERIODS['1h']).toISOString(),
      });
      clock.t += 1000;
      const fourth = await a.rotate(email).then((r) => r.key);
      expect([await works(b, second), await works(b, third), await works(b, fourth)]).toEqual([false, false, true]);
      expect(await b.endingKey(email)).toBeNull();
      const states = [];
      for await (const r of a.list()) if (r.email === email) states.push(r.state);
      expect(states).toEqual(['revoked', 'revoked', 'revoked', 'current']);
    });

    it('names every key each rule stopped, so each is purged: a rotate ending an earlier grace, a revoke ending a key in grace', async () => {
      const { a, b } = await open();
      const email = address('stopped');
      const id = (key: string) => key.slice(0, 12);
      const first = await a.issue(email);
      const second = await a.rotateKey(first, GRACE_PERIODS['1h']);
      expect(second.stopped).toEqual([id(first)]); // in grace: its answers kept before would outlive its end
      const third = await b.rotateKey(second.key, GRACE_PERIODS['1h']);
      expect(third.stopped).toEqual([id(second.key), id(first)]);
      const fourth = await a.rotate(email, GRACE_PERIODS['24h']);
      expect(fourth.stopped).toEqual([id(third.key), id(second.key)]);
      expect(await b.endGrace(email)).toEqual([id(third.key)]);
      const fifth = await a.rotate(email, GRACE_PERIODS['7d']);
      expect(await b.revoke(email)).toEqual([id(fifth.key), id(fourth.key)]);
      const sixth = await a.issue(email).then((k) => a.rotateKey(k, GRACE_PERIODS['1h']));
      expect(await b.revokeKey(sixth.key)).toHaveLength(2);
    });

    it('lists each key’s state: current, ending at its end, revoked', async () => {
      const { a, clock } = await open();
      const email = address('states');
      const first = await a.issue(email);
      clock.t += 1000;
      const second = await a.rotate(email, GRACE_PERIODS['24h']).then((r) => r.key);
      const listed = [];
      for await (const r of a.list()) if (r.email === email) listed.push(r);
      expect(listed.map((r) => [r.id, r.state, r.revokedAt])).toEqual([
        [first.slice(0, 12), 'ending', new Date(clock.t + GRACE_PERIODS['24h']).toISOString()],
        [second.slice(0, 12), 'current', null],
      ]);
      clock.t += GRACE_PERIODS['24h'];
      const later = [];
      for await (const r of a.list()) if (r.email === email) later.push(r.state);
      expect(later).toEqual(['revoked', 'current']);
    });

    it('lists every key with its state and never the key', async () => {
      const { a, clock } = await open();
      const email = address('list');
      const key = await a.issue(email);
      clock.t += 1000;
      const next = await a.rotate(email).then((r) => r.key);
      const listed = [];
      for await (const r of a.list()) if (r.email === email) listed.push(r);
      expect(listed.map((r) => [r.id, r.revokedAt === null])).toEqual([
        [key.slice(0, 12), false],
        [next.slice(0, 12), true],
      ]);
      expect(JSON.stringify(listed)).not.toContain(key.slice(12));
    });

    describe('with many calls at once', () => {
      it('hands out one key when twenty ask for one address at once', async () => {
        const { a, b } = await open();
        const email = address('issue-race');
        const outcomes = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            (i % 2 ? a : b).issue(email).then(
              (k) => k,
              (e: KeyError) => e.status,
            ),
          ),
        );
        const keys = outcomes.filter((o): o is string => typeof o === 'string');
        expect(keys).toHaveLength(1);
        expect(outcomes.filter((o) => o === 409)).toHaveLength(19);
        expect(await works(a, keys[0])).toBe(true);
      });

      it('leaves exactly one working key after ten rotations at once, held by the owner, who can rotate again', async () => {
        const { a, b } = await open();
        const email = address('rotate-race');
        const first = await a.issue(email);
        const handed = await Promise.all(
          Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).rotate(email).then((r) => r.key)),
        );
        const working = [];
        for (const k of [first, ...handed]) if (await works(b, k)) working.push(k);
        expect(working).toHaveLength(1);
        expect(handed).toContain(working[0]);
        expect((await a.activeKey(email))?.id).toBe(working[0].slice(0, 12));
        const again = await b.rotate(email).then((r) => r.key);
        expect([await works(a, working[0]), await works(a, again)]).toEqual([false, true]);
      });

      it('lets one of two rotations of the same key win; the winner works, and the owner can rotate again', async () => {
        const { a, b } = await open();
        const email = address('two-rotates');
        const key = await a.issue(email);
        const outcomes = await Promise.all(
          [a.rotateKey(key).then((r) => r.key), b.rotateKey(key).then((r) => r.key)].map((p) =>
            p.then(
              (k) => k,
              (e: KeyError) => e.status,
            ),
          ),
        );
        const won = outcomes.filter((o): o is string => typeof o === 'string');
        expect(won).toHaveLength(1);
        expect(outcomes).toContain(403);
        expect([await works(a, key), await works(a, won[0])]).toEqual([false, true]);
        expect(await works(a, await b.rotateKey(won[0]).then((r) => r.key))).toBe(true);
      });

      it('leaves one current key and at most one in its grace period after ten rotations with and without grace at once', async () => {
        const { a, b, clock } = await open();
        const email = address('grace-race');
        const first = await a.issue(email);
        const handed = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 ? a : b).rotate(email, i % 3 ? GRACE_PERIODS['1h'] : 0).then((r) => r.key),
          ),
        );
        const working = [];
        for (const k of [first, ...handed]) if (await works(b, k)) working.push(k);
        expect(working.length).toBeGreaterThanOrEqual(1);
        expect(working.length).toBeLessThanOrEqual(2);
        const current = await a.activeKey(email);
        const ending = await a.endingKey(email);
        expect(working.map((k) => k.slice(0, 12)).sort()).toEqual([current!.id, ...(ending ? [ending.id] : [])].sort());
        let currents = 0;
        for await (const r of a.list()) if (r.email === email && r.state === 'current') currents++;
        expect(currents).toBe(1);
        clock.t += GRACE_PERIODS['1h'];
        const still = [];
        for (const k of [first, ...handed]) if (await works(a, k)) still.push(k.slice(0, 12));
        expect(still).toEqual([current!.id]);
      });

      it('refuses every key a revoke acknowledged, grace or not, under rotations with grace at once', async () => {
        const { a, b } = await open();
        const email = address('grace-mix');
        await a.issue(email);
        const handed: string[] = [];
        const revokedBefore: string[][] = [];
        await Promise.all(
          Array.from({ length: 24 }, async (_, i) => {
            const keys = i % 2 ? a : b;
            const op = i % 4;
            if (op === 0)
              await keys.issue(email).then(
                (k) => handed.push(k),
                () => {},
              );
            else if (op === 1)
              await keys
                .rotate(email, GRACE_PERIODS['24h'])
                .then((r) => r.key)
                .then(
                  (k) => handed.push(k),
                  () => {},
                );
            else if (op === 2) await keys.endGrace(email).catch(() => {});
            else {
              const before = [...handed];
              if (
                await keys.revoke(email).then(
                  () => true,
                  () => false,
                )
              )
                revokedBefore.push(before);
            }
          }),
        );
        let working = 0;
        for (const k of handed) if (await works(a, k)) working++;
        expect(working).toBeLessThanOrEqual(2);
        for (const before of revokedBefore) for (const k of before) expect(await works(a, k)).toBe(false);
        const current = await a.activeKey(email);
        const ending = await a.endingKey(email);
        expect(working).toBe((current ? 1 : 0) + (ending ? 1 : 0));
      });

      it('opens one session when one link is used ten times at once', async () => {
        const { a, b } = await open();
        const { token } = await a.signIn(address('token-race'));
        const outcomes = await Promise.all(
          Array.from({ length: 10 }, (_, i) => status((i % 2 ? a : b).openSession(token))),
        );
        expect(outcomes.filter((o) => o === 'ok')).toHaveLength(1);
        expect(outcomes.filter((o) => o === 401)).toHaveLength(9);
      });

      it(`sends ${SIGN_INS_PER_WINDOW} links, no more, when twelve ask for one address at once`, async () => {
        const { a, b } = await open();
        const email = address('sign-in-race');
        const outcomes = await Promise.all(Array.from({ length: 12 }, (_, i) => status((i % 2 ? a : b).signIn(email))));
        expect(outcomes.filter((o) => o === 'ok')).toHaveLength(SIGN_INS_PER_WINDOW);
        expect(outcomes.filter((o) => o === 429)).toHaveLength(12 - SIGN_INS_PER_WINDOW);
      });

      it('refuses every key whose revocation was acknowledged, and keeps at most one active key, under a mix of writes', async () => {
        const { a, b } = await open();
        const email = address('mix');
        await a.issue(email);
        const handed: string[] = [];
        const revokedBefore: string[][] = [];
        await Promise.all(
          Array.from({ length: 24 }, async (_, i) => {
            const keys = i % 2 ? a : b;
            const op = i % 3;
            if (op === 0)
              await keys.issue(email).then(
                (k) => handed.push(k),
                () => {},
              );
            else if (op === 1)
              await keys
                .rotate(email)
                .then((r) => r.key)
                .then(
                  (k) => handed.push(k),
                  () => {},
                );
            else {
              const before = [...handed];
              if (
                await keys.revoke(email).then(
                  () => true,
                  () => false,
                )
              )
                revokedBefore.push(before);
            }
          }),
        );
        let working = 0;
        for (const k of handed) if (await works(a, k)) working++;
        expect(working).toBeLessThanOrEqual(1);
        // A revoke acknowledged once some keys were handed out means none of those works any more.
        for (const before of revokedBefore) for (const k of before) expect(await works(a, k)).toBe(false);
        expect(await a.activeKey(email).then((k) => (k ? 1 : 0))).toBe(working);
      });

      it('gets a session and a key for a session via either instance at once', async () => {
        const { a, b } = await open();
        const email = address('sessions');
        const session = await signedIn(a, email);
        expect(await b.sessionEmail(session)).toBe(email);
      });
    });
  });
}
