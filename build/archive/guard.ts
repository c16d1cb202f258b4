/**
 * The yearly-update guard: compares a freshly imported archive with the
 * committed data/archive-summary.json so that a new source can add years and
 * winners but never silently drop a year, a nomination or a win.
 */
import { hash } from 'node:crypto';
import type { Archive, ArchiveSummary, Nomination } from '../../src/shared/types.ts';

/** One-shot `hash`, not a Hash object each: it is called for every nomination. */
const sha = (text: string) => hash('sha256', text);

/** Identity of a nomination within its year: category, primary and secondary, not the outcome. */
export function fingerprint(category: string, n: Nomination): string {
  return sha([category, n.primary.join('\u001f'), (n.secondary ?? []).join('\u001f')].join('\u0000')).slice(0, 12);
}

export function summarize(archive: Archive): ArchiveSummary {
  const summary: ArchiveSummary = {};
  for (const [year, categories] of Object.entries(archive)) {
    const fingerprints: string[] = [];
    const winners: string[] = [];
    for (const c of categories) {
      for (const n of c.nominations) {
        const f = fingerprint(c.category, n);
        fingerprints.push(f);
        if (n.won) winners.push(f);
      }
    }
    summary[year] = {
      categories: categories.length,
      nominations: fingerprints.length,
      wins: winners.length,
      hash: sha(JSON.stringify(categories)),
      fingerprints: fingerprints.sort(),
      winners: winners.sort(),
    };
  }
  return summary;
}

export interface YearChange {
  year: string;
  added: number;
  removed: number;
  winsAdded: number;
  winsRemoved: number;
}

export interface Comparison {
  yearsAdded: string[];
  yearsRemoved: string[];
  changed: YearChange[];
  /** True when accepting this archive would lose something the summary holds. */
  destructive: boolean;
}

/** Multiset difference a - b. */
function minus(a: string[], b: string[]): number {
  const counts = new Map<string, number>();
  for (const x of b) counts.set(x, (counts.get(x) ?? 0) + 1);
  let missing = 0;
  for (const x of a) {
    const c = counts.get(x) ?? 0;
    if (c > 0) counts.set(x, c - 1);
    else missing++;
  }
  return missing;
}

export function compare(previous: ArchiveSummary, next: ArchiveSummary): Comparison {
  const yearsAdded = Object.keys(next).filter((y) => !(y in previous));
  const yearsRemoved = Object.keys(previous).filter((y) => !(y in next));
  const changed: YearChange[] = [];
  for (const year of Object.keys(next)) {
    const before = previous[year];
    const after = next[year];
    if (!before || before.hash === after.hash) continue;
    changed.push({
      year,
      added: minus(after.fingerprints, before.fingerprints),
      removed: minus(before.fingerprints, after.fingerprints),
      winsAdded: minus(after.winners, before.winners),
      winsRemoved: minus(before.winners, after.winners),
    });
  }
  const destructive = yearsRemoved.length > 0 || changed.some((c) => c.removed > 0 || c.winsRemoved > 0);
  return { yearsAdded, yearsRemoved, changed, destructive };
}

const listYears = (years: string[]) =>
  years.length > 8 ? `${years.length} years, ${years[0]} to ${years[years.length - 1]}` : years.join(', ');

/** Human lines describing a comparison; empty when nothing changed. */
export function describe(c: Comparison): string[] {
  const lines: string[] = [];
  if (c.yearsAdded.length) lines.push(`years added: ${listYears(c.yearsAdded)}`);
  if (c.yearsRemoved.length) lines.push(`years REMOVED: ${listYears(c.yearsRemoved)}`);
  for (const y of c.changed) {
    const parts = [];
    if (y.added) parts.push(`${y.added} nomination(s) added`);
    if (y.removed) parts.push(`${y.removed} nomination(s) REMOVED`);
    if (y.winsAdded) parts.push(`${y.winsAdded} win(s) set`);
    if (y.winsRemoved) parts.push(`${y.winsRemoved} win(s) TURNED INTO LOSSES`);
    if (!parts.length) parts.push('content changed (names or notes), same nominations and outcomes');
    lines.push(`${y.year}: ${parts.join(', ')}`);
  }
  return lines;
}

/** One year a line: diffs of the committed summary stay readable. */
export function formatSummary(summary: ArchiveSummary): string {
  const lines = Object.entries(summary).map(([year, s]) => `  ${JSON.stringify(year)}: ${JSON.stringify(s)}`);
  return `{\n${lines.join(',\n')}\n}\n`;
}
