/**
 * Log redaction, for every runtime: a line goes in, the same line comes out
 * with every API key, sign-in token and portal session masked, however it was
 * written. Runs where lines are written (the Node logger's stream hook, the
 * edge function's console), so no code path can forget it.
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
 */

export const SECRET_PREFIXES = { key: 'faa_', token: 'fat_', session: 'fas_' } as const;
/** Characters of a key kept in logs: prefix and 8 characters, its id. */
const KEY_ID_LENGTH = 12;
const MASK = '…';

const ATOM = /[A-Za-z0-9_%\\-]+/g;
const PREFIXED = /(fa[ats]_)([A-Za-z0-9_-]*)/gi;
const BARE = /[A-Za-z0-9_-]{32,}/;
/** Labels whose value is a secret, matched on the decoded label (`x-api-key`, `access_token` too). */
const LABEL = /(?:^|[-_.])(?:api[-_]?key|apikey|key|token|session|secret|bearer|authorization|auth)$/i;
/** A label inside one atom, its `=` encoded: `apikey%3Dfaa_...` decodes to `apikey=faa_...`. */
const INNER_LABEL = /([A-Za-z_.-]*)=(.*)$/s;

/** Percent and `\u00XX` decoding, repeated until nothing changes (at most 4 rounds), never throwing. */
export function decodeAll(text: string): string {
  let out = text;
  for (let i = 0; i < 4; i++) {
    const next = out
      .replace(/%([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
      .replace(/\\u00([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
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
  const found: string[] = [];
  for (const m of decoded.matchAll(PREFIXED)) if (m[2].length > KEY_ID_LENGTH - 4) found.push(masked(m[1], m[2]));
  if (found.length > 0) return found.join(',');
  return BARE.test(decoded) ? MASK : null;
}

/** Whether the text just before an atom makes it a secret's value (`apikey=`, `Bearer `, `authorization: `). */
function labelled(line: string, atomStart: number): boolean {
  const before = line.slice(Math.max(0, atomStart - 64), atomStart);
  const m = /([A-Za-z0-9_%.\\-]+)(=|:\s*|\s+)$/.exec(before);
  if (!m) return false;
  const label = decodeAll(m[1]);
  if (m[2] === '=' || m[2].startsWith(':')) return LABEL.test(label);
  return /^bearer$/i.test(label); // a space separates only `Bearer <secret>`
}

function redactAtom(atom: string, line: string, at: number): string {
  const decoded = decodeAll(atom);
  const secrets = secretsIn(decoded);
  if (secrets !== null) {
    const inner = INNER_LABEL.exec(decoded);
    const label = inner && /^[A-Za-z_.-]*$/.test(inner[1]) && !secretsIn(inner[1]) ? `${inner[1]}=` : '';
    return `${label}${secrets}`;
  }
  if (isMaskedId(decoded)) return atom;
  const inner = INNER_LABEL.exec(decoded);
  if (inner && LABEL.test(inner[1]) && inner[2] !== '') return `${inner[1]}=${MASK}`;
  return labelled(line, at) ? MASK : atom;
}

/** The line with every key, token and session masked (see the top of this file). */
export function redactLine(line: string): string {
  return line.replace(ATOM, (atom, at: number) => redactAtom(atom, line, at));
}
