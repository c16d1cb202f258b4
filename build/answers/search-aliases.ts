/**
 * Short forms a search finds a name by, beside its own names: made from the
 * archive where it can be (the initials of a company's words, "mgm" for
 * Metro-Goldwyn-Mayer; of a film series' title, the part before a colon,
 * "lotr" for The Lord of the Rings: …; only for a name nominated
 * INITIALS_FROM times or more, as a short form is common only for a name
 * much spoken of, and a rare one's would stand before the names starting
 * so: "the pha"), hand-kept only where it cannot (a
 * name's word as people spell it, from real searches). A short form that is
 * a word of some name is left out: that word finds what holds it. Pure.
 */
import { searchKey } from '../../src/shared/search.ts';

/** Nominations from which a name is found by its initials. */
export const INITIALS_FROM = 5;

/** Other spellings people type for a word of a name (real searches, issue #53), each with the word the archive writes. */
export const OTHER_SPELLINGS: [typed: string, written: string][] = [['jody', 'jodie']];

/** The initials of a name's words (its key's), for a company of three words or more and a film title whose part before a colon has three. */
export function initialsOf(name: string, kind: string): string | null {
  const part =
    kind === 'film' ? (name.includes(':') ? name.slice(0, name.indexOf(':')) : '') : kind === 'company' ? name : '';
  const words = searchKey(part)
    .replace(/^(?:the|a|an) /, '')
    .split(' ');
  if (words.length < 3 || !words.every((w) => /^[a-z]+$/.test(w))) return null;
  return words.map((w) => w[0]).join('');
}

/** A name's short forms: its initials (nominated `nominations` times), unless a word of some name (`words`), and its words as people also spell them. */
export function shortForms(name: string, kind: string, nominations: number, words: ReadonlySet<string>): string[] {
  const forms: string[] = [];
  const initials = nominations >= INITIALS_FROM ? initialsOf(name, kind) : null;
  if (initials !== null && !words.has(initials)) forms.push(initials);
  const key = searchKey(name).split(' ');
  for (const [typed, written] of OTHER_SPELLINGS)
    if (key.includes(written)) forms.push(key.map((w) => (w === written ? typed : w)).join(' '));
  return forms;
}
