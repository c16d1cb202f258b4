/**
 * What a new source revision changes, nomination by nomination: the pinned
 * archive and the new one, both as the importer reads them, compared on the
 * data itself (not on the summary's fingerprints), so that the report can
 * show examples and not only counts. Pure: two archives in, the changes out;
 * `npm run data:update` (build/update/update.ts) formats them and decides.
 */
import { heldYear } from '../archive/import.ts';
import type { Archive, Category, Nomination } from '../../src/shared/types.ts';

/** How many examples of each kind of change the report shows. */
export const EXAMPLES = 3;

/** One kind of change: how many, in which held years, and the first few. */
export interface Tally {
  count: number;
  years: string[];
  examples: string[];
}

/** A ceremony year present on one side only. */
export interface YearContent {
  year: string;
  /** The ceremony ordinals held that year (1930 held two). */
  ceremonies: number[];
  categories: number;
  nominations: number;
  winners: number;
}

export interface Totals {
  years: number;
  first: string;
  last: string;
  categories: number;
  nominations: number;
  winners: number;
}

export interface RevisionChanges {
  added: YearContent[];
  removed: YearContent[];
  nominationsAdded: Tally;
  nominationsRemoved: Tally;
  nominationsChanged: Tally;
  winnersChanged: Tally;
  categoriesRenamed: Tally;
  /** Held years where a nomination that won no longer does (flipped, changed or removed). */
  winnersLost: string[];
  /** Added years with nominations but no winner yet (a revision from between the nominations and the ceremony). */
  nominationsOnly: string[];
  /** Held years where the new revision loses what the pinned one has: a ceremony, a nomination or a win. */
  losses: string[];
  totals: { before: Totals; after: Totals };
}

const tally = (): Tally => ({ count: 0, years: [], examples: [] });

function note(t: Tally, year: string, example: string): void {
  t.count++;
  if (t.years.at(-1) !== year) t.years.push(year);
  if (t.examples.length < EXAMPLES) t.examples.push(example);
}

/** A nomination as a person reads it: who or what, then for what, in brackets. */
export function nominee(n: Nomination): string {
  const secondary = n.secondary ?? [];
  return n.primary.join(', ') + (secondary.length ? ` (${secondary.join(', ')})` : '');
}

/** Identity of a nomination within a category: who and for what, not the outcome or the notes. */
const identity = (n: Nomination) => JSON.stringify([n.primary, n.secondary ?? []]);
const winners = (categories: Category[]) =>
  categories.reduce((sum, c) => sum + c.nominations.filter((n) => n.won).length, 0);
const nominations = (categories: Category[]) => categories.reduce((sum, c) => sum + c.nominations.length, 0);

/** The ceremony ordinals held in `year`, from data/held-years.json. */
function ceremoniesOf(year: string): number[] {
  const out: number[] = [];
  for (let c = 1; c <= Number(year); c++) if (heldYear(c) === Number(year)) out.push(c);
  return out;
}

function content(year: string, categories: Category[]): YearContent {
  return {
    year,
    ceremonies: ceremoniesOf(year),
    categories: categories.length,
    nominations: nominations(categories),
    winners: winners(categories),
  };
}

function totals(archive: Archive): Totals {
  const years = Object.keys(archive);
  const all = Object.values(archive);
  return {
    years: years.length,
    first: years[0] ?? '',
    last: years.at(-1) ?? '',
    categories: all.reduce((sum, c) => sum + c.length, 0),
    nominations: all.reduce((sum, c) => sum + nominations(c), 0),
    winners: all.reduce((sum, c) => sum + winners(c), 0),
  };
}

/**
 * Pairs the categories a year lost with those it gained: first a gained one
 * holding the same nominations, else the gained one at the same place in the
 * ceremony. The renamed name maps to the new one.
 */
function renames(before: Category[], after: Category[]): Map<string, string> {
  const afterNames = new Set(after.map((c) => c.category));
  const beforeNames = new Set(before.map((c) => c.category));
  const gained = after.filter((c) => !beforeNames.has(c.category));
  const nominees = (c: Category) => c.nominations.map(identity).join('\n');
  const renamed = new Map<string, string>();
  const taken = new Set<string>();
  before.forEach((lost, place) => {
    if (afterNames.has(lost.category)) return;
    const same = gained.find((g) => !taken.has(g.category) && nominees(g) === nominees(lost));
    const atPlace =
      after[place] && gained.includes(after[place]) && !taken.has(after[place].category) ? after[place] : undefined;
    const pair = same ?? atPlace;
    if (!pair) return;
    taken.add(pair.category);
    renamed.set(lost.category, pair.category);
  });
  return renamed;
}

interface Entry {
  category: string;
  place: number;
  n: Nomination;
}

const entries = (categories: Category[], rename: Map<string, string> = new Map()): Entry[] =>
  categories.flatMap((c) =>
    c.nominations.map((n, place) => ({ category: rename.get(c.category) ?? c.category, place, n })),
  );

/** Takes, from `pool`, the first entry `match` accepts. */
function take(pool: Entry[], match: (e: Entry) => boolean): Entry | undefined {
  const at = pool.findIndex(match);
  return at === -1 ? undefined : pool.splice(at, 1)[0];
}

/** The changes within one held year both revisions have. */
function compareYear(
  year: string,
  before: Category[],
  after: Category[],
  out: RevisionChanges,
  lost: { years: Set<string>; wins: Set<string> },
): void {
  const rename = renames(before, after);
  for (const [from, to] of rename) note(out.categoriesRenamed, year, `${year} · "${from}" → "${to}"`);
  const added = entries(after);
  const paired: [Entry, Entry][] = [];
  const unpaired: Entry[] = [];
  for (const old of entries(before, rename)) {
    const same = take(added, (e) => e.category === old.category && identity(e.n) === identity(old.n));
    if (same) paired.push([old, same]);
    else unpaired.push(old);
  }
  // A nomination at the same place of the same category, with other names or notes, was corrected rather than replaced.
  const removed: Entry[] = [];
  for (const old of unpaired) {
    const corrected = take(added, (e) => e.category === old.category && e.place === old.place);
    if (corrected) {
      paired.push([old, corrected]);
      note(out.nominationsChanged, year, `${year} · ${old.category}: ${nominee(old.n)} → ${nominee(corrected.n)}`);
    } else removed.push(old);
  }
  for (const [old, now] of paired) {
    if (old.n.won !== now.n.won) {
      note(
        out.winnersChanged,
        year,
        `${year} · ${now.category}: ${nominee(now.n)}: ${old.n.won ? 'won → lost' : 'lost → won'}`,
      );
      if (old.n.won) lost.wins.add(year);
    } else if (identity(old.n) === identity(now.n) && (old.n.notes ?? '') !== (now.n.notes ?? '')) {
      note(out.nominationsChanged, year, `${year} · ${now.category}: ${nominee(now.n)}: notes changed`);
    }
  }
  for (const e of removed) {
    note(out.nominationsRemoved, year, `${year} · ${e.category}: ${nominee(e.n)}${e.n.won ? ' (a winner)' : ''}`);
    lost.years.add(year);
    if (e.n.won) lost.wins.add(year);
  }
  for (const e of added)
    note(out.nominationsAdded, year, `${year} · ${e.category}: ${nominee(e.n)}${e.n.won ? ' (a winner)' : ''}`);
}

/** Everything `next` changes of `pinned`. */
export function compareRevisions(pinned: Archive, next: Archive): RevisionChanges {
  const out: RevisionChanges = {
    added: [],
    removed: [],
    nominationsAdded: tally(),
    nominationsRemoved: tally(),
    nominationsChanged: tally(),
    winnersChanged: tally(),
    categoriesRenamed: tally(),
    winnersLost: [],
    nominationsOnly: [],
    losses: [],
    totals: { before: totals(pinned), after: totals(next) },
  };
  const lost = { years: new Set<string>(), wins: new Set<string>() };
  for (const [year, categories] of Object.entries(next)) {
    if (!Object.hasOwn(pinned, year)) out.added.push(content(year, categories));
  }
  for (const [year, categories] of Object.entries(pinned)) {
    if (Object.hasOwn(next, year)) {
      compareYear(year, categories, next[year], out, lost);
    } else {
      out.removed.push(content(year, categories));
      lost.years.add(year);
    }
  }
  const byYear = (years: Set<string>) => [...years].sort((a, b) => Number(a) - Number(b));
  out.winnersLost = byYear(lost.wins);
  out.nominationsOnly = out.added.filter((y) => y.nominations > 0 && y.winners === 0).map((y) => y.year);
  out.losses = byYear(new Set([...lost.years, ...lost.wins]));
  return out;
}
