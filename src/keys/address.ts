/**
 * E-mail addresses as the key service takes them: one address, one account,
 * however it is typed (trimmed, NFC, lower-cased), and never one holding a
 * control or format character, which would make a second account for the
 * same mailbox or reach a terminal. `printable` makes any text safe to print.
 */
import { KeyError } from './contract.ts';
import { KEY_MESSAGES } from '../shared/messages.ts';

/** Unicode control (Cc), format (Cf), line and paragraph separators (Zl, Zp): never part of an address. */
const CONTROL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;
const CONTROL_ALL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\\]/gu;

/**
 * A text with every control or format character (and the backslash) written as `\u{…}`: safe to print to a terminal.
 */
export const printable = (text: string) =>
  text.replace(CONTROL_ALL, (c) =>
    c === '\\' ? '\\\\' : `\\u{${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}}`,
  );

const EMAIL =
  /^[^\s@<>()[\]\\,;:"]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function isEmail(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 254 && EMAIL.test(value);
}

/** Addresses are compared without case: `Ada@Example.org` and `ada@example.org` share one key. */
export const normalizeEmail = (email: string) => email.trim().normalize('NFC').toLowerCase();

/**
 * An address as it is counted, stored and mailed to: trimmed, NFC, lower-cased
 * (domain and local part alike); a 400 for one holding a control or format
 * character (NUL, ESC, U+202E: each would make a new address for the same
 * mailbox, or reach a terminal) or one that is not an address.
 */
export function addressOf(input: string): string {
  if (typeof input === 'string' && CONTROL.test(input)) throw new KeyError(400, KEY_MESSAGES.controlInEmail);
  const address = typeof input === 'string' ? normalizeEmail(input) : input;
  if (!isEmail(address)) throw new KeyError(400, KEY_MESSAGES.badEmail);
  return address;
}
