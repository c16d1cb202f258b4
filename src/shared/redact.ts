/**
 * Log redaction, for every runtime: a line goes in, the same line comes out
 * with every API key, sign-in token and portal session masked, however it was
 * written. The front door (src/api/handler.ts) runs it on every line it makes
 * (`loggable`), the access line's key segment aside, which it never reads into
 * a line; the runtimes' log sinks write lines as they are given.
 *
 * A line is cut into atoms: runs of the characters a secret or its
 * percent-encoding is made of (`A-Z a-z 0-9 _ - %`, plus `\` for JSON-style
 * `\u0066` escapes). Each atom is decoded as often as it decodes (double
 * encoding included), and masked when its decoded form holds
 * - a secret by its prefix, in any case (`faa_` key, `fat_` token, `fas_`
 *   session) with more than 8 characters after it: a key keeps its 12-character
 *   id (what `keys list` shows), tokens and sessions keep only the prefix;
 * - 32 or more characters of the secrets' alphabet in a row (a secret sent
 *   without its prefix);
 * - or when it is the value of a label that names a secret (`apikey=`, `key=`,
 *   `token=`, `session=`, `Bearer `, `Authorization:`, in any case or
 *   encoding): masked whole, unless it is already a masked id.
 *
 * What is masked is written `...` (a key keeps its id before it). The scan
 * runs on every log line, so labels are judged by their ending and length
 * before anything is sliced, decoded or matched against a pattern.
 */

export const SECRET_PREFIXES = { key: 'faa_', token: 'fat_', session: 'fas_' } as const;
/** A key's id, the characters of it kept in logs and shown to its owner: the prefix and 8 characters. */
export const KEY_ID_LENGTH = SECRET_PREFIXES.key.length + 8;
/**
 * What replaces a secret: ASCII, so that a redacted line stays a one-byte string (with `…` every
 * access line became a two-byte string, and the logger took about 0.4 µs longer to encode it).
 */
const MASK = '...';
/**
 * Shortest text that holds a secret: a prefix and more than a key id's 8 characters after it (a bare secret needs 32).
 */
const SHORTEST_SECRET = KEY_ID_LENGTH + 1;

const PREFIXED = /(fa[ats]_)([A-Za-z0-9_-]*)/gi;
const HAS_PREFIX = /fa[ats]_/i;
const BARE = /[A-Za-z0-9_-]{32,}/;
/** Labels whose value is a secret, matched on the decoded label (`x-api-key`, `access_token` too). */
const LABEL = /(?:^|[-_.])(?:api[-_]?key|apikey|key|token|session|secret|bearer|authorization|auth)$/i;
const isLetter = (c: number) => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
/** Characters of a label before an atom (`apikey`, `api%4Bey`, `x-api-key`): `A-Z a-z 0-9 _ % . \ -`. */
const isLabelChar = (c: number) =>
  isLetter(c) || isDigit(c) || c === 0x5f || c === 0x25 || c === 0x2e || c === 0x5c || c === 0x2d;
/** Characters of a label inside an atom: `A-Z a-z _ . -`. */
const isInnerLabelChar = (c: number) => isLetter(c) || c === 0x5f || c === 0x2e || c === 0x2d;
/** What `\s` matches in a JavaScript pattern. */
const isSpace = (c: number) =>
  c === 0x20 ||
  (c >= 0x09 && c <= 0x0d) ||
  c === 0xa0 ||
  c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 ||
  c === 0x2029 ||
  c === 0x202f ||
  c === 0x205f ||
  c === 0x3000 ||
  c === 0xfeff;
/** How far before an atom its label is looked for. */
const LABEL_WINDOW = 64;

/** Whether a text has anything to decode: a `%` or a `\`. */
const hasEscapes = (text: string) => text.includes('%') || text.includes('\\');

const hexValue = (c: number) =>
  c >= 0x30 && c <= 0x39 ? c - 0x30 : (c | 0x20) >= 0x61 && (c | 0x20) <= 0x66 ? (c | 0x20) - 0x57 : -1;

/**
 * `%XX` and (then, on the result) `\u00XX` replaced by their
 * characters, left to right, each once: one round of decodeAll.
 */
function decodeRound(text: string): string {
  return decodeEscapes(decodeEscapes(text, 0x25, 1), 0x5c, 4);
}

/**
 * Every escape in `text` replaced by its character: `%XX` (`lead` %, its two
 * hex digits from `hexAt` 1) or `\u00XX` (`lead` \, `u00`, hex digits from
 * `hexAt` 4). The text between escapes is copied in slices, not a character
 * at a time.
 */
function decodeEscapes(text: string, lead: number, hexAt: number): string {
  let out = '';
  let copied = 0;
  for (
    let i = text.indexOf(String.fromCharCode(lead));
    i !== -1 && i < text.length;
    i = text.indexOf(String.fromCharCode(lead), i + 1)
  ) {
    if (hexAt === 4 && !(text[i + 1] === 'u' && text[i + 2] === '0' && text[i + 3] === '0')) continue;
    const high = hexValue(text.charCodeAt(i + hexAt));
    const low = high >= 0 ? hexValue(text.charCodeAt(i + hexAt + 1)) : -1;
    if (low < 0) continue;
    out += text.slice(copied, i) + String.fromCharCode(high * 16 + low);
    copied = i + hexAt + 2;
    i = copied - 1;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** Percent and `\u00XX` decoding, repeated until nothing changes (at most 4 rounds), never throwing. */
export function decodeAll(text: string): string {
  let out = text;
  for (let i = 0; i < 4 && hasEscapes(out); i++) {
    const next = decodeRound(out);
    if (next === out) break;
    out = next;
  }
  return out;
}

/** A secret as logs may show it: a key's id, a token's or session's prefix. */
function masked(prefix: string, rest: string): string {
  const p = prefix.toLowerCase();
  return p === SECRET_PREFIXES.key ? `${p}${rest.slice(0, KEY_ID_LENGTH - p.length)}${MASK}` : `${p}${MASK}`;
}

/** True for what this module writes itself: a key id or a bare prefix, then the mask. */
const isMaskedId = (decoded: string) => /^fa[ats]_[A-Za-z0-9_-]{0,8}$/i.test(decoded);

/** The masked forms of the secrets in `decoded`, or null when it holds none. */
function secretsIn(decoded: string): string | null {
  if (decoded.length < SHORTEST_SECRET) return null;
  if (!HAS_PREFIX.test(decoded)) return BARE.test(decoded) ? MASK : null;
  const found: string[] = [];
  for (const m of decoded.matchAll(PREFIXED)) if (m[2].length > KEY_ID_LENGTH - 4) found.push(masked(m[1], m[2]));
  if (found.length > 0) return found.join(',');
  return BARE.test(decoded) ? MASK : null;
}

/** Start of the run of characters `is` accepts that ends just before `end`, going no further back than `floor`. */
function runStart(text: string, end: number, floor: number, is: (c: number) => boolean): number {
  let at = end;
  while (at > floor && is(text.charCodeAt(at - 1))) at--;
  return at;
}

const EQUALS = 0x3d;
const COLON = 0x3a;

/**
 * Where the label before an atom ends (the index of its `=` or `:`, or of the
 * spaces after `Bearer`), within LABEL_WINDOW; -1 when the atom follows no
 * separator. (Indexes, not slices: it runs for every atom after `=`, `:` or a space.)
 */
function labelEnd(line: string, atomStart: number, floor: number): number {
  const c = line.charCodeAt(atomStart - 1);
  if (c === EQUALS || c === COLON) return atomStart - 1;
  // The spaces before the atom, walked here rather than by runStart: passed a third predicate, runStart
  // stops being inlined, and a line with an escape took about 200 ns longer.
  let end = atomStart;
  while (end > floor && isSpace(line.charCodeAt(end - 1))) end--;
  if (end === atomStart) return -1;
  return line.charCodeAt(end - 1) === COLON && end - 1 >= floor ? end - 1 : end;
}

/** The words every label LABEL accepts ends with (`apikey` and `api-key` end with `key`). */
const LABEL_WORDS = ['key', 'token', 'session', 'secret', 'bearer', 'authorization', 'auth'];

/** Whether line[start, end) ends with `word` (lower case), in any case. */
function endsWithWord(line: string, start: number, end: number, word: string): boolean {
  if (end - start < word.length) return false;
  for (let i = 0; i < word.length; i++)
    if ((line.charCodeAt(end - word.length + i) | 0x20) !== word.charCodeAt(i)) return false;
  return true;
}

function endsWithLabelWord(line: string, start: number, end: number): boolean {
  const last = line.charCodeAt(end - 1) | 0x20;
  // Most labels (`year`, `name`) end with none of the words' last letters: y, n, t, r, h.
  if (last !== 0x79 && last !== 0x6e && last !== 0x74 && last !== 0x72 && last !== 0x68) return false;
  for (const word of LABEL_WORDS) if (endsWithWord(line, start, end, word)) return true;
  return false;
}

/**
 * Whether the text just before an atom makes it a secret's value (`apikey=`,
 * `Bearer `, `authorization: `). `lastEscape` is the index of the last `%` or
 * `\\` before the atom (-1 for none): a label with nothing to decode is judged
 * by its ending or its length, without a slice, a pattern, or (when no escape
 * is near) even finding where it starts.
 */
function labelled(line: string, atomStart: number, lastEscape: number): boolean {
  const floor = Math.max(0, atomStart - LABEL_WINDOW);
  const end = labelEnd(line, atomStart, floor);
  if (end <= 0 || !isLabelChar(line.charCodeAt(end - 1))) return false;
  const spaced = line.charCodeAt(end) !== EQUALS && line.charCodeAt(end) !== COLON; // only `Bearer <secret>`
  const start = lastEscape < floor ? -1 : runStart(line, end, floor, isLabelChar);
  if (lastEscape < start || start < 0) {
    if (!spaced)
      return (
        endsWithLabelWord(line, floor, end) && LABEL.test(line.slice(runStart(line, end, floor, isLabelChar), end))
      );
    const six = end - 6; // `Bearer` and nothing before it
    return (
      six >= floor &&
      endsWithWord(line, six, end, 'bearer') &&
      (six === floor || !isLabelChar(line.charCodeAt(six - 1)))
    );
  }
  const label = decodeAll(line.slice(start, end));
  return spaced ? /^bearer$/i.test(label) : LABEL.test(label);
}

/**
 * A label inside one atom, its `=` encoded: `apikey%3Dfaa_...` decodes
 * to `apikey=faa_...`: the letters before the first `=`, and the rest.
 */
function innerLabel(decoded: string): [label: string, value: string] | null {
  const eq = decoded.indexOf('=');
  if (eq < 0) return null;
  return [decoded.slice(runStart(decoded, eq, 0, isInnerLabelChar), eq), decoded.slice(eq + 1)];
}

function redactAtom(atom: string, line: string, at: number, lastEscape: number): string {
  // Short, with nothing to decode: neither a secret nor holding
  // a label (atoms have no `=`); only its label can mask it.
  if (atom.length < SHORTEST_SECRET && !hasEscapes(atom))
    return labelled(line, at, lastEscape) && !isMaskedId(atom) ? MASK : atom;
  const decoded = decodeAll(atom);
  const secrets = secretsIn(decoded);
  const inner = innerLabel(decoded);
  if (secrets !== null) return `${inner && !secretsIn(inner[0]) ? `${inner[0]}=` : ''}${secrets}`;
  if (isMaskedId(decoded)) return atom;
  if (inner && LABEL.test(inner[0]) && inner[1] !== '') return `${inner[0]}=${MASK}`;
  return labelled(line, at, lastEscape) ? MASK : atom;
}

/** The scan's character classes, by code: 0 outside atoms, 1 in atoms, 2 an escape (`%` or `\`, also in atoms). */
const ATOM_CLASS = new Uint8Array(256);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-') ATOM_CLASS[c.charCodeAt(0)] = 1;
ATOM_CLASS[0x25] = ATOM_CLASS[0x5c] = 2;
/** Whether a UTF-16 unit belongs to an atom: `A-Z a-z 0-9 _ - % \` (the logger cuts long lines only between atoms). */
export const isAtomChar = (c: number) => c < 128 && ATOM_CLASS[c] !== 0;

/** Index of the first `fa[ats]_` (any case) in line[start, end), or -1. */
function prefixAt(line: string, start: number, end: number): number {
  for (let i = start; i + 4 <= end; i++) {
    if (
      (line.charCodeAt(i) | 0x20) !== 0x66 ||
      (line.charCodeAt(i + 1) | 0x20) !== 0x61 ||
      line.charCodeAt(i + 3) !== 0x5f
    )
      continue;
    const c = line.charCodeAt(i + 2) | 0x20;
    if (c === 0x61 || c === 0x74 || c === 0x73) return i;
  }
  return -1;
}

/**
 * redactAtom for an atom with nothing to decode (the line has no `%` or `\`):
 * all of it is secret-alphabet, so the first prefix's secret runs to its end,
 * and 32 characters are a bare secret. Null when the atom stays as it is.
 */
function redactPlainAtom(line: string, start: number, end: number, lastEscape: number): string | null {
  if (end - start >= SHORTEST_SECRET) {
    const p = prefixAt(line, start, end);
    if (p >= 0 && end - p > KEY_ID_LENGTH) return masked(line.slice(p, p + 4), line.slice(p + 4, end));
    if (end - start >= 32) return MASK;
  }
  if (!labelled(line, start, lastEscape)) return null;
  return end - start < SHORTEST_SECRET && isMaskedId(line.slice(start, end)) ? null : MASK;
}

const ENCODER = new TextEncoder();
const CODES = new Uint8Array(4096);

/**
 * The line as the scan reads it, one byte a character: ASCII as it is (most
 * lines, copied natively), any other space as a space, anything else as 0x80,
 * which is neither an atom's character nor a separator. The scan's loops then
 * read a byte array, which V8 reads faster than `charCodeAt` (a redacted access
 * line took about half the time).
 */
function scanCodes(line: string): Uint8Array {
  const codes = line.length <= CODES.length ? CODES : new Uint8Array(line.length);
  const { read, written } = ENCODER.encodeInto(line, codes);
  if (read === line.length && written === line.length) return codes;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    codes[i] = c < 128 ? c : isSpace(c) ? 0x20 : 0x80;
  }
  return codes;
}

/**
 * The line with every key, token and session masked (see the
 * top of this file). One pass; the line itself when nothing is.
 */
export function redactLine(line: string): string {
  const codes = scanCodes(line);
  const length = line.length;
  let out = '';
  let copied = 0;
  let lastEscape = -1; // the last `%` or `\` of the atoms read so far
  let before = -1; // the character just before the atom at `at`, as scanCodes gives it (none at the line's start)
  for (let at = 0; at < length;) {
    const c = codes[at];
    const kind = ATOM_CLASS[c];
    if (kind === 0) {
      before = c;
      at++;
      continue;
    }
    const start = at;
    let escape = kind === 2 ? at : -1; // the atom's last `%` or `\`
    for (at++; at < length; at++) {
      const k = ATOM_CLASS[codes[at]];
      if (k === 0) break;
      if (k === 2) escape = at;
    }
    // `at` is the atom's end. With nothing to decode, an atom too short to
    // hold a secret and after none of `=`, `:`, a space is left as it is.
    let redacted: string | null = null;
    if (escape < 0) {
      if (at - start >= SHORTEST_SECRET || before === EQUALS || before === COLON || isSpace(before))
        redacted = redactPlainAtom(line, start, at, lastEscape);
    } else {
      const atom = line.slice(start, at);
      const general = redactAtom(atom, line, start, lastEscape);
      if (general !== atom) redacted = general;
      lastEscape = escape;
    }
    if (redacted !== null) {
      out += line.slice(copied, start) + redacted;
      copied = at;
    }
  }
  return copied === 0 ? line : out + line.slice(copied);
}

/** Longest line kept whole; a longer one (a URL with a 15 KB "key", say) keeps its start and end. */
export const MAX_LINE = 2048;

/**
 * A line cut to about MAX_LINE characters, only between the atoms the
 * redactor reads, so no secret is ever split into a part it
 * would no longer recognise: the start up to the last boundary before 1.5 KiB,
 * the end from the first boundary in its last 256 characters.
 */
export function shorten(line: string): string {
  if (line.length <= MAX_LINE) return line;
  let head = MAX_LINE - 512;
  while (head > 0 && isAtomChar(line.charCodeAt(head - 1)) && isAtomChar(line.charCodeAt(head))) head--;
  let tail = line.length - 256;
  while (tail < line.length && isAtomChar(line.charCodeAt(tail - 1)) && isAtomChar(line.charCodeAt(tail))) tail++;
  return `${line.slice(0, head)} ...[${tail - head} characters left out]... ${line.slice(tail)}`;
}

/** A line as a log may hold it: cut to about MAX_LINE characters, then every secret in it masked. */
export const loggable = (line: string): string => redactLine(shorten(line));
