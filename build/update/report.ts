/**
 * The change report of `npm run data:update`, as a person reads it at a
 * glance: the revisions, the ceremonies added, what changed in earlier years
 * (counts with the first few examples), losses, and the totals before and
 * after. Markdown that reads as plain text too: the same text is printed, put
 * in the pull request's body and appended to CHANGELOG.md. Every text that
 * comes from the revision (names, titles, categories, where it was read from)
 * goes in through `markdownText`, so none can become markup, a link or HTML,
 * or drive a terminal.
 */
import { printable } from '../../src/keys/address.ts';
import type { RevisionChanges, Tally, YearContent } from './changes.ts';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/**
 * Text from the revision as Markdown and HTML show it literally: control,
 * format and bidirectional characters as `\u{…}` escapes (as `keys list`
 * prints them), `&`, `<` and `>` as entities, every character Markdown gives
 * a meaning to behind a backslash, and `://` broken up so no address becomes
 * a link.
 */
export function markdownText(text: string): string {
  return printable(text)
    .replace(/[&<>]/g, (c) => ENTITIES[c])
    .replace(/[`*_{}[\]()#+\-.!|~]/g, '\\$&')
    .replaceAll('://', '&#58;//');
}

/** One revision of the source, as the report names it. */
export interface RevisionInfo {
  /** The upstream commit, when known. */
  commit: string | null;
  /** The commit's date, or the day it was pinned when the update did not learn the commit's date. */
  date: string | null;
  /** Which of the two `date` is. */
  dated: 'commit' | 'pinned';
  /** Where it was read from: a URL or a file name. */
  from: string;
  sha256: string;
  bytes: number;
}

const number = (n: number) => n.toLocaleString('en-US');
const short = (r: RevisionInfo) => (r.commit ? r.commit.slice(0, 12) : `sha256 ${r.sha256.slice(0, 12)}`);
const day = (r: RevisionInfo) => (r.date ? ` (${r.dated === 'pinned' ? 'pinned ' : ''}${r.date.slice(0, 10)})` : '');
const ordinal = (n: number) =>
  `${n}${[11, 12, 13].includes(n % 100) ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th')}`;

function yearLine(y: YearContent): string {
  const ceremonies = y.ceremonies.length ? ` (${y.ceremonies.map(ordinal).join(' and ')} ceremony)` : '';
  return `- ${y.year}${ceremonies}: ${number(y.categories)} categories, ${number(y.nominations)} nominations, ${number(y.winners)} winners`;
}

function tallyLines(what: string, t: Tally): string[] {
  if (!t.count) return [`- ${what}: none`];
  const years = t.years.length > 6 ? `${t.years.length} years, ${t.years[0]} to ${t.years.at(-1)}` : t.years.join(', ');
  const more = t.count > t.examples.length ? `  - … and ${number(t.count - t.examples.length)} more` : null;
  return [
    `- ${what}: ${number(t.count)} (${years})`,
    ...t.examples.map((e) => `  - ${markdownText(e)}`),
    ...(more ? [more] : []),
  ];
}

/** The report for `changes` between the pinned revision and the new one. */
export function formatReport(
  changes: RevisionChanges,
  pinned: RevisionInfo,
  next: RevisionInfo,
  repository: string,
): string {
  const { before, after } = changes.totals;
  const lines = [
    `Source: oscars.csv of ${repository}, ${short(pinned)}${day(pinned)} → ${short(next)}${day(next)}`,
    '',
  ];
  lines.push('Ceremonies added:', ...(changes.added.length ? changes.added.map(yearLine) : ['- none']), '');
  if (changes.nominationsOnly.length) {
    lines.push(
      `**NOMINATIONS ONLY: ${changes.nominationsOnly.join(', ')} has nominations but NO WINNERS yet.** ` +
        'The API will answer every nomination of that ceremony with "won": false until the update after the ceremony.',
      '',
    );
  }
  if (changes.removed.length) lines.push('**Ceremonies REMOVED:**', ...changes.removed.map(yearLine), '');
  lines.push(
    'Earlier years:',
    ...tallyLines('nominations added', changes.nominationsAdded),
    ...tallyLines('nominations removed', changes.nominationsRemoved),
    ...tallyLines('nominations changed', changes.nominationsChanged),
    ...tallyLines('winners changed', changes.winnersChanged),
    ...tallyLines('categories renamed', changes.categoriesRenamed),
    '',
  );
  if (changes.losses.length) lines.push(`**Losses:** ${lossSentence(changes)}`, '');
  lines.push(
    'Totals (before → after):',
    `- ceremony years: ${before.years} → ${after.years} (${before.first}–${before.last} → ${after.first}–${after.last})`,
    `- categories: ${number(before.categories)} → ${number(after.categories)}`,
    `- nominations: ${number(before.nominations)} → ${number(after.nominations)}`,
    `- winners: ${number(before.winners)} → ${number(after.winners)}`,
    '',
    `New revision: ${markdownText(next.from)}, sha256 ${next.sha256}, ${number(next.bytes)} bytes.`,
  );
  return `${lines.join('\n')}\n`;
}

/** What is lost, naming the years: for the report and the refusal. */
export function lossSentence(changes: RevisionChanges): string {
  const parts: string[] = [];
  if (changes.removed.length) parts.push(`ceremonies removed in ${changes.removed.map((y) => y.year).join(', ')}`);
  if (changes.nominationsRemoved.count)
    parts.push(`nominations removed in ${changes.nominationsRemoved.years.join(', ')}`);
  if (changes.winnersLost.length) parts.push(`winners lost in ${changes.winnersLost.join(', ')}`);
  return parts.join('; ');
}
