/**
 * Search by approximate name (`/search/name=…`): every film, person and
 * company the archive names (one result per IMDb id where the source gives
 * one, else per name) and every full category name, found however it is
 * typed. The build writes one index (build/answers/search-index.ts): a sorted
 * vocabulary of the words of every name, each word's postings (the entries
 * holding it), each entry's keys (its names, and for a category the names
 * people give its award: "best actress"), a weight (nominations) and what a
 * result shows (the vocabulary, postings, keys and weights in a core file,
 * what results show in files of their own, read as a search shows them:
 * `storedFiles`). A search finds the entries holding its most telling word
 * (its longest: as written, as the start of a word, within one or two edits
 * anywhere in it, or as two words of a name written as one, or the other way
 * round), then ranks each of them against every word asked. Nothing here
 * reads a file or knows a runtime.
 *
 * What is forgiven: case, marks, punctuation and spacing; one typo in a word
 * of 4 letters or more, two in one of 8 or more, and in a text of 10
 * letters or more (or of 8 asking a name of 10, at most two letters longer)
 * one in a word of 3 and two in one of 5 (a letter wrong, missing, added,
 * or two swapped, with or without a letter between them, the first letters
 * too), two in all, each mistyped word matched to the name's word it is
 * closest to even when a word written right is as close to that one ("life
 * for lief": Live for Life); `&` for "and" and
 * a leading article (such small words, and initials, are optional on either
 * side); digits, number words and roman numerals (1 to 20); words in any
 * order; words the name does not have, when they are small words or a year
 * (a year ranks the film of that year, or a name nominated then, first);
 * words of the name not asked; a word's start ("leo dicaprio"); short forms
 * the build gives (build/answers/search-aliases.ts: "mgm", "lotr"); and
 * words joined or split ("otoole", "god father").
 *
 * What a search costs is bounded: it reads the first SEARCH_KEY_CHARACTERS
 * (400) characters of its text once taken apart (NFKD), and considers its
 * first SEARCH_WORDS (10) distinct words, each cut to SEARCH_WORD_LETTERS
 * (24) letters (a word asked again asks nothing more); it compares at most
 * two of them with the vocabulary, and ranks the names those hold. A text
 * whose words would rank many names is answered by the build (`COMMON_CANDIDATES`):
 * every run of distinct small words ("the", "of the") and every word or
 * start held by COMMON_CANDIDATES (100) names or more ("john", "mar"). A
 * short last word after others ranks first the names it starts ("the g").
 *
 * Ranking, best first: the name exactly as asked; the same name ignoring
 * case, marks, punctuation, spacing, small words and how numbers are
 * written (a category so named after a film, person or company so named,
 * unless the text starts with "best"); every word asked a whole word of the
 * name (those naming all of its words first), or the name starting as typed
 * when the last of several words asked has one or two letters ("the in":
 * The Insider, not A Place in the Sun); a word asked the start of
 * one (a name starting as typed first: "united ar" for United Artists, not
 * United States Army Air Force), as good as a word of a longer name when
 * the name is the text but for the last letter of a last word of 4 letters
 * or more ("chan": Chang with Jackie Chan); the same two leaving a small word or a
 * year asked out; a typo or two (the fewer the better, a name named whole
 * first, then one naming the words in the order asked). Within one class: the
 * year asked, then more nominations, then a name starting as asked, then
 * the name.
 */

import type { SearchResult } from './types.ts';
import { MAX_SEARCH_LENGTH, recordPath } from './routes.ts';

/** Most results a search answers. */
export const SEARCH_LIMIT = 10;

/**
 * What a search considers of its text: its first SEARCH_WORDS words, each cut
 * to SEARCH_WORD_LETTERS letters, a word asked again counted once. No name
 * has a word of more than 17 letters, and a text of more words is found by
 * its first ten as well (every word a whole word of the name); what lies
 * beyond only cost: 50 times "the" cost 185 times the median search, 200
 * times U+FDFA (800 words once taken apart) 234 times, and asked ten times
 * "the" still cost 70 times (each name ranked against each).
 */
export const SEARCH_WORDS = 10;
export const SEARCH_WORD_LETTERS = 24;

/**
 * Characters of a text, once taken apart (NFKD), that make its search key:
 * twice the longest text a search takes, so every letter of it with a mark
 * counts, and no name is longer. A letter that takes apart into many
 * (U+FDFA: 18 of them) cannot make the key longer than this.
 */
export const SEARCH_KEY_CHARACTERS = 2 * MAX_SEARCH_LENGTH;

/**
 * The texts the build answers (`StoredSearchIndex.answers`), as a search
 * would, so no search ranks many names: every run of distinct small words
 * ("the", "of the"), and every word or start of one (3 letters or more) that
 * names hold, as a word or the start of one, in COMMON_CANDIDATES entries
 * or more ("john", "mar"). A text whose words asked once each, as written,
 * are one of these is answered so (50 times "the" as "the"), unless some name
 * is those words run together (the name as asked would come first).
 */
export const COMMON_CANDIDATES = 100;

/** A search key cut to what a search considers (`SEARCH_WORDS` distinct words of `SEARCH_WORD_LETTERS` letters). */
export function considered(key: string): string {
  return consideredWords(key.split(' ')).join(' ');
}

/** The words of a search key (`considered`) a search considers. */
function consideredWords(all: string[]): string[] {
  const words: string[] = [];
  for (const word of all) {
    const cut = word.length > SEARCH_WORD_LETTERS ? word.slice(0, SEARCH_WORD_LETTERS) : word;
    if (!words.includes(cut) && words.push(cut) === SEARCH_WORDS) break;
  }
  return words;
}

/** Letters NFKD does not take apart, as their plain spellings. */
const FOLDED: Record<string, string> = {
  ø: 'o',
  ł: 'l',
  đ: 'd',
  ð: 'd',
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  þ: 'th',
  ı: 'i',
  ħ: 'h',
};
const FOLDABLE = /[øłđðßæœþıħ]/g;

/**
 * A name as search compares it: lower case, without marks, every run of
 * other characters than letters and digits one space; of a text, its first
 * SEARCH_KEY_CHARACTERS characters once taken apart (the Unicode classes cost
 * by the character: 200 times U+FDFA, 3,600 characters, cost 0.3 ms).
 */
export function searchKey(text: string): string {
  return (
    asciiKey(text.slice(0, SEARCH_KEY_CHARACTERS)) ??
    text
      .slice(0, SEARCH_KEY_CHARACTERS)
      .normalize('NFKD')
      .slice(0, SEARCH_KEY_CHARACTERS)
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .replace(FOLDABLE, (c) => FOLDED[c])
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim()
  );
}

/**
 * `searchKey` of a text of ASCII characters alone (most searches), without
 * Unicode normalisation or regular expressions: a fresh isolate compiles the
 * Unicode classes on first use, about 1 ms; null for any other text.
 */
function asciiKey(text: string): string | null {
  let key = '';
  let gap = false;
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c > 127) return null;
    if (c >= 65 && c <= 90) c += 32;
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
      if (gap && key !== '') key += ' ';
      key += String.fromCharCode(c);
      gap = false;
    } else gap = true;
  }
  return key;
}

const NUMBER_WORDS = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
  'twenty',
];
/** Roman numerals 2 to 20 (I, V and X alone are too often a letter or a word). */
const ROMAN = [
  '',
  '',
  'ii',
  'iii',
  'iv',
  '',
  'vi',
  'vii',
  'viii',
  'ix',
  '',
  'xi',
  'xii',
  'xiii',
  'xiv',
  'xv',
  'xvi',
  'xvii',
  'xviii',
  'xix',
  'xx',
];
const NUMBERS = new Map<string, string>([
  ...NUMBER_WORDS.map((w, n) => [w, String(n)] as const),
  ...ROMAN.flatMap((w, n) => (w ? [[w, String(n)] as const] : [])),
]);
/** Small words a name or a search may leave out ("&" is no word once punctuation is set aside, so "and" is one of them). */
export const SMALL = new Set(['the', 'a', 'an', 'and', 'of']);
const ARTICLE = /^(?:the|a|an) /;

/** A word of a key as it may have been written: a number up to 20 as its word ("3": "three"). */
function written(word: string): string {
  const c = word.charCodeAt(0);
  return c >= 48 && c <= 57 && word.length <= 2 ? (NUMBER_WORDS[Number(word)] ?? word) : word;
}

/** A search key with each number word and roman numeral written in digits: how both sides are compared. */
export function indexKey(key: string): string {
  return key === ''
    ? ''
    : key
        .split(' ')
        .map((w) => NUMBERS.get(w) ?? w)
        .join(' ');
}

/** A year someone might add to a title. */
const isYear = (word: string) => word.length === 4 && word >= '1900' && word <= '2099' && /^\d{4}$/.test(word);

/** What a result is: from the source's IMDb ids and columns; a category name is `category`. */
export type SearchKind = SearchResult['kind'];
const KINDS: Record<string, SearchKind> = { p: 'person', c: 'company', n: 'country', f: 'film', a: 'category' };
export const KIND_CODES: Record<SearchKind, string> = {
  person: 'p',
  company: 'c',
  country: 'n',
  film: 'f',
  category: 'a',
};

/**
 * The index as made by the build: `words`, every word of every key, sorted;
 * `postings`, per word, the entries holding it (base 36, ascending, `,`
 * between); `keys`, per entry, its keys (`indexKey` of each name, then of
 * each other name people give it), `|` between; `weights`, per entry, what
 * breaks ties (its nominations); `rows`, per entry, what a result shows,
 * tab-separated (see `resultOf`). No served name holds a NUL, a tab, a line
 * break, `|` or `~`.
 */
export interface StoredSearchIndex {
  words: string[];
  postings: string[];
  keys: string[];
  weights: number[];
  rows: string[];
  /** Answers made by the build (`COMMON_CANDIDATES`): per text, its words, a tab, then each entry found, and the key shown when not its first (`entry` or `entry.key`, base 36, `,` between). */
  answers: string[];
}

/** Digits (base 36) of each line's place in a block: 36^4 places, well above the largest block. */
const PLACE = 4;
const LARGEST_BLOCK = 36 ** PLACE - 2;

/** Lines joined by line breaks, and before them where each starts (and where one after the last would), PLACE digits each. */
function placed(lines: string[]): [string, string] {
  const block = lines.join('\n');
  if (block.length > LARGEST_BLOCK)
    throw new Error(`search index: a block of ${block.length} characters is more than ${LARGEST_BLOCK}`);
  let places = '';
  let at = 0;
  for (const line of [...lines, '']) {
    places += at.toString(36).padStart(PLACE, '0');
    at += line.length + 1;
  }
  return [places, block];
}

/** Files the rows are cut into, each a run of entries (entries are heaviest first, so a category or a much-nominated name shares its file with its peers). */
const ROW_FILES = 32;

/**
 * The stored files of an index, the core first. The core: a header
 * (entries, rows per file and files of rows, the digits of a word's place,
 * the words), the count of words of each length, the vocabulary, every
 * word's postings and every entry's keys (its weight first), NULs between.
 * The vocabulary holds the words of each length in a run, shortest first,
 * each run in order, each word followed by its place in the sorted
 * vocabulary (the line of its postings): a fresh isolate finds a word by its
 * place in its run and never splits the core (splitting 13,000 words costs
 * a cold isolate about 4 ms). The postings and the keys are each a block
 * after the places of its lines, cut out as a search needs them. Then the
 * files of rows, each such a block: a search reads the core, and the files
 * of rows holding what it shows.
 */
export function storedFiles(index: StoredSearchIndex): string[] {
  const entries = index.keys.length;
  const rowsPer = Math.max(1, Math.ceil(entries / ROW_FILES));
  const rows: string[] = [];
  for (let at = 0; at < entries; at += rowsPer) rows.push(placed(index.rows.slice(at, at + rowsPer)).join('\u0000'));
  const keys = placed(index.keys.map((k, i) => `${index.weights[i]}|${k}`));
  const postings = placed(index.postings);
  let digits = 1;
  while (36 ** digits < index.words.length) digits++;
  // The vocabulary by length, each word followed by its place in the sorted vocabulary (`digits` base-36 digits): a
  // word of a length is found by its place in that length's run, so the core is never split.
  const counts: number[] = [];
  const runs: string[][] = [];
  index.words.forEach((word, at) => {
    if (word === '' || word.includes('\u0000'))
      throw new Error(`search index: the word ${JSON.stringify(word)} cannot be stored`);
    counts[word.length] = (counts[word.length] ?? 0) + 1;
    (runs[word.length] ??= []).push(word + at.toString(36).padStart(digits, '0'));
  });
  const header = [entries, rowsPer, rows.length, digits, index.words.length].join(' ');
  const vocabulary = runs.map((run) => (run ? run.join('') : '')).join('');
  return [
    [
      header,
      Array.from(counts, (n) => n ?? 0).join(' '),
      vocabulary,
      ...postings,
      ...keys,
      index.answers.join('\n'),
    ].join('\u0000'),
    ...rows,
  ];
}

/** Lines of a block, each cut out when asked for: the core's postings or keys, or a stored file of rows. */
export class Lines {
  readonly length: number;
  private readonly places: string;
  private readonly block: string;

  constructor(places: string, block: string) {
    this.places = places;
    this.block = block;
    this.length = places.length / PLACE - 1;
    if (!Number.isInteger(this.length) || this.length < 0) throw new Error('a search index with a damaged block');
  }

  /** A stored file of rows (`storedFiles`). */
  static parse(text: string): Lines {
    const blocks = text.split('\u0000');
    if (blocks.length !== 2) throw new Error('not a file of a search index');
    return new Lines(blocks[0], blocks[1]);
  }

  line(i: number): string {
    const at = i * PLACE;
    return this.block.slice(
      parseInt(this.places.slice(at, at + PLACE), 36),
      parseInt(this.places.slice(at + PLACE, at + 2 * PLACE), 36) - 1,
    );
  }
}

/** Edits allowed in a word asked: none under 4 letters, one under 8, two from 8. */
const typosFor = (length: number) => (length < 4 ? 0 : length < 8 ? 1 : 2);
/** The most typos forgiven in a word, and in a name. */
const MOST_TYPOS = 2;

/** Rows of the edit table, kept between calls: a comparison makes no garbage. */
const ROWS = {
  older: new Int32Array(64),
  before: new Int32Array(64),
  previous: new Int32Array(64),
  current: new Int32Array(64),
};

/**
 * Edits (insertions, deletions, substitutions, swaps of neighbours) between
 * `a` and `b`, or `max + 1` once more than `max`. Two neighbours swapped
 * with a letter added or dropped between them are two edits, as a person
 * counts them ("hgmuhes" for "hughes", "asfrley" for "farley"), not three
 * as the usual table (which edits no letter twice) has it.
 */
export function editsWithin(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  if (a.length >= ROWS.previous.length || b.length >= ROWS.previous.length) return max + 1; // longer than any word of a name
  if (lettersApart(a, b) > 2 * max) return max + 1;
  let { older, before, previous, current } = ROWS;
  for (let j = 0; j <= b.length; j++) previous[j] = j;
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let best = i;
    const ai = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      const bj = b.charCodeAt(j - 1);
      let d = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ai === bj ? 0 : 1));
      if (i > 1 && j > 1 && ai === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === bj && before[j - 2] + 1 < d)
        d = before[j - 2] + 1;
      // Swapped with a letter between: one added to `a` ("xzy" for "yx"), or one dropped from it ("yx" for "xzy").
      if (i > 2 && j > 1 && ai === b.charCodeAt(j - 2) && a.charCodeAt(i - 3) === bj && older[j - 2] + 2 < d)
        d = older[j - 2] + 2;
      if (i > 1 && j > 2 && ai === b.charCodeAt(j - 3) && a.charCodeAt(i - 2) === bj && before[j - 3] + 2 < d)
        d = before[j - 3] + 2;
      current[j] = d;
      if (d < best) best = d;
    }
    if (best > max) return max + 1;
    [older, before, previous, current] = [before, previous, current, older];
  }
  return previous[b.length];
}

/** Letters counted by `lettersApart`, by class (as `letterBits` has them); all 0 between calls. */
const COUNTS = new Int32Array(30);

/** A character's class: a to z, then digits and anything else on four. */
function classOf(code: number): number {
  const c = code - 97;
  return c >= 0 && c < 26 ? c : 26 + (c & 3);
}

/**
 * How many letters one word has that the other has not, with repeats (a
 * letter twice in one and once in the other is one). An edit changes at most
 * two (a substitution; a swap none), so words more than twice the edits
 * forgiven apart are not compared letter by letter (`editsWithin`).
 */
function lettersApart(a: string, b: string): number {
  for (let i = 0; i < a.length; i++) COUNTS[classOf(a.charCodeAt(i))]++;
  for (let i = 0; i < b.length; i++) COUNTS[classOf(b.charCodeAt(i))]--;
  // Each class counted as the first of its letters is met again, and left at 0.
  let apart = 0;
  for (let i = 0; i < a.length + b.length; i++) {
    const c = classOf(i < a.length ? a.charCodeAt(i) : b.charCodeAt(i - a.length));
    apart += Math.abs(COUNTS[c]);
    COUNTS[c] = 0;
  }
  return apart;
}

/** The letters of a word (`length` characters of `text` from `from`) as bits (a to z, digits on one): one edit changes at most two, so words further apart are skipped unread. */
function letterBits(text: string, from = 0, length = text.length): number {
  let bits = 0;
  for (let i = from; i < from + length; i++) bits |= 1 << classOf(text.charCodeAt(i));
  return bits;
}

/** The letters of each number word (`letterBits`). */
const NUMBER_BITS = NUMBER_WORDS.map((w) => letterBits(w));

/** `editsWithin` a word (its letters `bits`) and the number word of `n`, up to MOST_TYPOS: more at once when their letters are too unlike. */
function editsToNumber(word: string, bits: number, n: number): number {
  return bitCount(bits ^ NUMBER_BITS[n]) > 2 * MOST_TYPOS
    ? MOST_TYPOS + 1
    : editsWithin(word, NUMBER_WORDS[n], MOST_TYPOS);
}

function bitCount(n: number): number {
  n -= (n >>> 1) & 0x55555555;
  n = (n & 0x33333333) + ((n >>> 2) & 0x33333333);
  return (Math.imul((n + (n >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

/**
 * The search `SearchIndex.ready` runs: a name with a letter dropped, so it
 * goes the ways most searches go (near words, starts, ranking); a name no
 * bench or test asks.
 */
const READY_TEXT = 'gene hackmn';

/** A search's text, taken apart once. */
interface Asked {
  text: string;
  /** Its words with numbers in digits, and as written (two of them may be one word of a name: "hartst one"). */
  words: string[];
  written: string[];
  /** The words run together, and without the years asked (a year may be no part of the name). */
  compact: string;
  compactNoYear: string;
  /** The words as written run together (roman numerals as letters: "dark vi" may be the start of Dark Victory). */
  typed: string;
  /** The same without a leading article. */
  bare: string;
  bareNoYear: string;
  years: string[];
  /** A long text (LONG_TEXT): a word of it may hold a typo more (so may one of a long name). */
  long: boolean;
  /** Per word asked, words of names compared with it so far: their edits, or -1 beyond MOST_TYPOS (null: the word itself only). */
  close: (Map<string, number> | null)[];
  /** Per word asked, it and the next as one word (`pairOf`). */
  pairs: (string | null)[];
  /** Per word asked, its letters (`letterBits`), as typed, and of it and the next as one word (`pairs`; 0 for none). */
  bits: number[];
  typedBits: number[];
  pairBits: number[];
  /** The words asked every name must hold (`fitPlacing`: all but small words, initials and years). */
  required: number[];
  /** Per word asked, whether it is a small word (SMALL), looked up once rather than for every name ranked. */
  small: boolean[];
  /** The word asked that a name last could not hold (a word every name must hold), tried first on the next; -1 none yet. */
  missed: number;
  /** This search among all (`Parts.rankedBy`). */
  id: number;
}

/** Searches taken apart so far (`Asked.id`). */
let searches = 0;

/** Letters from which a text is long: a typo more is forgiven in it. */
const LONG_TEXT = 10;

/** A search's text taken apart: compared whole as the name exactly asked, word by word within what a search considers (`considered`). */
function asked(text: string, key: string): Asked {
  // The key is split once, and its words joined once more than needs be only when it asks a year: a text of 200 words
  // ("a b c …") cost as much taken apart as ranking the names its first ten find.
  const parts = key.split(' ');
  const all = parts.map((w) => NUMBERS.get(w) ?? w); // the words of `indexKey(key)`
  const written = consideredWords(parts);
  const words = written.map((w) => NUMBERS.get(w) ?? w);
  const join = (list: string[]) => list.join('');
  const strip = (list: string[]) => (list.length > 1 && ARTICLE.test(`${list[0]} `) ? list.slice(1) : list);
  const compact = join(all);
  // Without a leading article: the same letters but the article's (no number, so written as in `all`).
  const bare = strip(all) === all ? compact : compact.slice(all[0].length);
  const kept = all.some(isYear) ? all.filter((w) => !isYear(w)) : null;
  const q: Asked = {
    text,
    words,
    written,
    compact,
    compactNoYear: kept ? join(kept) : compact,
    typed: join(written),
    bare,
    bareNoYear: kept ? join(strip(kept)) : bare,
    years: words.filter(isYear),
    long: compact.length >= LONG_TEXT,
    close: [],
    pairs: [],
    bits: words.map((w) => letterBits(w)),
    typedBits: written.map((w) => letterBits(w)),
    pairBits: [],
    required: [],
    small: words.map((w) => SMALL.has(w)),
    missed: -1,
    id: ++searches,
  };
  q.pairs = words.map((w, i) => pairOf(q, i));
  q.pairBits = q.pairs.map((pair) => (pair === null ? 0 : letterBits(pair)));
  q.required = words.flatMap((w, i) => (q.small[i] || w.length === 1 || isYear(w) ? [] : [i]));
  q.close = words.map((w, i) => (w.length < 3 || q.small[i] ? null : new Map()));
  return q;
}

/**
 * Typos forgiven between a word asked and a word of a name: one from 4
 * letters (either's), two from 8; when the text or the name is long
 * (LONG_TEXT), one from 3 ("raiders of the lost arc") and two from 5
 * (either's: "fred oneedl", "laurence ennet", "cgina king" for Regina King).
 */
function typosBetween(asked: string, word: string, long: boolean): number {
  if (asked.length < 3) return 0;
  const length = Math.max(asked.length, word.length);
  return Math.max(typosFor(length), long ? (length >= LONG_WORD ? 2 : 1) : 0);
}

/** Letters from which a word of a long text or name may hold two typos. */
const LONG_WORD = 5;

/** The typos forgiven a word asked, against a word of any length, when it finds the names to rank (the second typo a long text or name forgives a word of 5 to 7 letters is looked for only in those). */
const mostTypos = (asked: string) => (asked.length < 3 ? 0 : typosFor(asked.length + 1));

/** Two words asked as one word: as written, in digits if it is a number ("one" "teen" is no number, but "hartst" "one" is "hartstone"). */
function pairOf(q: Asked, i: number): string | null {
  if (i + 1 >= q.words.length || SMALL.has(q.words[i]) || SMALL.has(q.words[i + 1])) return null;
  const word = q.written[i] + q.written[i + 1];
  return NUMBERS.get(word) ?? word;
}

/** A key of an entry, taken apart once. */
interface Key {
  words: string[];
  compact: string;
  /** Without a leading article. */
  bare: string;
  article: boolean;
  /** Its small words (SMALL), a bit each by place (the first 31: a longer key fits nothing). */
  small: number;
  /** Per word, its letters (`letterBits`): a word asked too unlike is no typo of it; -1 for a number (`typoOf`). */
  bits: Int32Array;
  /** The letters of all its words, as stored and as written, and of its words of one letter (`lettersAllow`). */
  letters: number;
  initials: number;
}

function keyOf(key: string): Key {
  const compact = key.replaceAll(' ', '');
  const article = ARTICLE.test(key);
  const words = key.split(' ');
  let small = 0;
  for (let j = 0; j < words.length && j < 31; j++) if (SMALL.has(words[j])) small |= 1 << j;
  return {
    words,
    compact,
    bare: article ? compact.slice(key.indexOf(' ')) : compact,
    article,
    small,
    bits: Int32Array.from(words, (w) => (written(w) === w ? letterBits(w) : -1)),
    letters: words.reduce((bits, w) => bits | letterBits(w) | letterBits(written(w)), 0),
    initials: words.reduce((bits, w) => (w.length === 1 ? bits | letterBits(w) : bits), 0),
  };
}

/**
 * How well one key answers the words asked, as one number (lower is better,
 * -1 no match, so ranking a key makes no garbage): its rank times 4, plus 2
 * when a year asked is no part of it, plus 1 when it does not start as asked.
 */
type Fit = number;

const NO_FIT = -1;
/** The rank from which a key needs two typos. */
const TWO_TYPOS = 24;
const fitOf = (rank: number, starts: boolean, yearAside: boolean): Fit =>
  rank * 4 + (yearAside ? 2 : 0) + (starts ? 0 : 1);

/**
 * Ranks: 1 the same key (0, the name exactly as asked, is told apart by the
 * caller); then by what the words asked are to the key's words: whole words
 * (8), a word asked the start of one (10), the same leaving out a small
 * word or a year asked (12 and 14), a typo (16) or two (24), 4 more when a
 * small word or a year asked is not in it; and 1 more for whole words, 2
 * for typos, when some of the key's words (but small ones) were not asked;
 * for a start when the key does not start as typed; for typos when it does
 * not start as asked. A key starting as typed is 8 when the last of
 * several words asked has one or two letters.
 */
function fit(q: Asked, key: Key): Fit {
  const { compact, bare: keyBare, words: k } = key;
  if (compact === q.compact || keyBare === q.bare) return fitOf(1, true, false);
  if (q.years.length > 0 && (compact === q.compactNoYear || keyBare === q.bareNoYear)) return fitOf(1, true, true);
  if (k.length > 30) return NO_FIT;
  // A long name is as a long text to a text that may be it with two letters dropped ("cgina king": Regina King), not
  // to one that may be some of its words ("tim allen" is not Tin Pan Alley).
  const long = q.long || (compact.length >= LONG_TEXT && compact.length <= q.compact.length + MOST_TYPOS);
  // No order places the words asked when the key's letters leave one every name must hold no place (quick to tell),
  for (const i of q.required)
    if (!lettersAllow(q, i, key) && !pairAllowed(q, i, key) && !(i > 0 && pairAllowed(q, i - 1, key))) return NO_FIT;
  // nor when it cannot hold one the last name could not: likely, then, that one is not among its words either.
  if (q.missed >= 0 && cannotHold(q, q.missed, key, long)) return NO_FIT;
  const inOrder = fitPlacing(q, key, long, false);
  // A word written right may have taken the only word a mistyped one is close to ("life for lief": Live for Life).
  return inOrder === TAKEN ? Math.max(NO_FIT, fitPlacing(q, key, long, true)) : inOrder;
}

/**
 * Whether the `i`th word asked, one every name must hold (`fitPlacing`: not
 * a small word, an initial or a year), has no place in a key, whatever
 * other words took: neither with a neighbour as one word of it, nor alone.
 */
function cannotHold(q: Asked, i: number, key: Key, long: boolean): boolean {
  const [k, pair, before] = [key.words, q.pairs[i], i > 0 ? q.pairs[i - 1] : null];
  if ((pair !== null && k.includes(pair)) || (before !== null && k.includes(before))) return false;
  return placeOf(q, i, key, 0, long) < 0;
}

/**
 * Whether a key's letters (`letterBits`) may give the `i`th word asked a
 * place of its own (`placeOf`): every letter of it, or of it as typed, among
 * them (a word, words run together, the start of one), or all but as many
 * as its typos may be (an edit brings at most one letter the other word
 * lacks). False means it has none; true, that it may.
 */
function lettersAllow(q: Asked, i: number, key: Key): boolean {
  // A word of one letter before the last is one of the key's words or nowhere (no start, no typo): an initial.
  if (q.words[i].length === 1 && i < q.words.length - 1) return (q.bits[i] & key.initials) !== 0;
  const missing = q.bits[i] & ~key.letters;
  return (
    missing === 0 || (q.typedBits[i] & ~key.letters) === 0 || (q.close[i] !== null && bitCount(missing) <= MOST_TYPOS)
  );
}

/** Whether the `i`th word asked and the next, as one word (`pairs`), may be a word of a key: none, when it has not their letters. */
const pairAllowed = (q: Asked, i: number, key: Key) => q.pairs[i] !== null && (q.pairBits[i] & ~key.letters) === 0;

/** Whether a key starts as the text typed, or so but for its leading article ("sweet he": The Sweet Hereafter). */
function readsAsTyped(q: Asked, key: Key): boolean {
  const { compact, bare } = key;
  return (
    compact.startsWith(q.compact) ||
    compact.startsWith(q.typed) ||
    bare.startsWith(q.compact) ||
    bare.startsWith(q.typed)
  );
}

/** Whether a key is the text asked and one letter more at its end, run together (or both without a leading article). */
function oneShort(q: Asked, key: Key): boolean {
  const { compact, bare } = key;
  return (
    (compact.length === q.compact.length + 1 && compact.startsWith(q.compact)) ||
    (bare.length === q.bare.length + 1 && bare.startsWith(q.bare))
  );
}

/** No fit, but a word asked was close only to words of the key other words asked took: `fit` places it again. */
const TAKEN = -2;

/** Where each word asked was found among a key's words, as `fit` places them (-1: not found). */
const PLACES = new Int32Array(SEARCH_WORDS);

/**
 * How well a key answers the words asked (`fit`), each placed in turn among
 * its words not yet taken (`placeOf`): in the order asked, or, when
 * `mistypedFirst`, the words the key does not hold as written before the
 * others. `long`: the text or the key is long (a typo more is forgiven).
 */
function fitPlacing(q: Asked, key: Key, long: boolean, mistypedFirst: boolean): Fit {
  const { words: k, article } = key;
  const words = q.words;
  let used = 0;
  let prefix = false;
  let edits = 0;
  let yearAside = false;
  let unasked = 0; // 1 when a small word or a year asked is not in the key
  for (let i = 0; i < words.length; i++) PLACES[i] = -2; // not placed yet
  for (let pass = mistypedFirst ? 0 : 1; pass < 2; pass++) {
    for (let i = 0; i < words.length; i++) {
      const w = words[i];
      if (PLACES[i] !== -2 || (pass === 0 && (q.small[i] || k.includes(w)))) continue;
      // Two words asked that are one word of the name ("god father").
      const pair = q.pairs[i];
      const j = !pairAllowed(q, i, key) || PLACES[i + 1] !== -2 ? -1 : k.indexOf(pair!);
      if (j >= 0 && !(used & (1 << j))) {
        used |= 1 << j;
        [PLACES[i], PLACES[i + 1]] = [j, j];
        i++;
        continue;
      }
      const place = lettersAllow(q, i, key) ? placeOf(q, i, key, used, long) : -1;
      PLACES[i] = place < 0 ? -1 : place & 31;
      if (place >= 0) {
        used |= ((1 << ((place >> 5) & 3)) - 1) << (place & 31);
        edits += (place >> 7) & 3;
        if (place & 512) prefix = true;
        // A small word, or an initial ("daniell l fapp": the initial may be taken with a typo, "daniel l" run together), may be missing.
      } else if (q.small[i] || w.length === 1) unasked = 1;
      else if (isYear(w)) [yearAside, unasked] = [true, 1];
      else {
        q.missed = i;
        return !mistypedFirst && taken(q, i, key, used, long) ? TAKEN : NO_FIT;
      }
    }
  }
  if (used === 0 || edits > MOST_TYPOS) return NO_FIT;
  // Where the first word asked that is not a small word was found.
  let lead = -1;
  for (let i = 0; i < words.length && lead < 0; i++) if (!q.small[i]) lead = PLACES[i];
  const starts = lead === (article ? 1 : 0);
  // 1 when some word of the key but a small one was not asked (`fit` places none in a key of more than 30 words).
  const some = ((1 << k.length) - 1) & ~used & ~key.small ? 1 : 0;
  // With typos, a name of the words in the order asked before another ("nichoas ike": Nicholas Pike, not Mike Nichols).
  if (edits > 0) return fitOf(8 + 8 * edits + 4 * unasked + 2 * some + (starts ? 0 : 1), starts, yearAside);
  // A last word of one or two letters is more often a word being typed than a whole one: a name starting as typed is
  // as good as one naming every word ("the in": The Insider before A Place in the Sun).
  const last = q.written[words.length - 1];
  if (words.length > 1 && last.length < 3 && unasked === 0 && readsAsTyped(q, key)) return fitOf(8, starts, yearAside);
  // A name answering every word asked, the last completed, before one that leaves a small word asked out ("birds an");
  // one that starts as typed first ("united ar": United Artists before United States Army Air Force).
  // A name typed whole but for the last letter of its last word, asked with 4 letters or more (a typo is forgiven in
  // such a word: "chan" for Chang), is as close as one holding every word asked among others (Jackie Chan): weight,
  // then starting as asked, tells them apart. A shorter word is more likely a start being typed ("the pos").
  if (prefix && unasked === 0 && last.length >= 4 && oneShort(q, key)) return fitOf(9, starts, yearAside);
  if (prefix) return fitOf(10 + 4 * unasked + (readsAsTyped(q, key) ? 0 : 1), starts, yearAside);
  return fitOf(8 + 4 * unasked + some, starts, yearAside);
}

/**
 * Where the `i`th word asked stands among a key's words `k` not yet `used`,
 * best first: the word itself; two or three of them run together
 * ("otoole"); the start of one (the last word asked); one within its typos
 * (`long`: more of them, `typosBetween`), the fewest. As one number (no
 * garbage): the place, plus 32 times the words it takes, 128 times its
 * edits, 512 for a start; -1 nowhere.
 */
function placeOf(q: Asked, i: number, key: Key, used: number, long: boolean): number {
  const k = key.words;
  const w = q.words[i];
  for (let j = 0; j < k.length; j++) if (!(used & (1 << j)) && k[j] === w) return j | 32;
  for (let j = 0; j + 1 < k.length && w.length >= 4; j++) {
    if (used & (3 << j) || !(w.startsWith(k[j]) || w.startsWith(written(k[j])))) continue;
    const [two, spoken] = [k[j] + k[j + 1], written(k[j]) + written(k[j + 1])];
    if (two === w || spoken === w) return j | 64;
    if (j + 2 < k.length && !(used & (4 << j)) && (two + k[j + 2] === w || spoken + written(k[j + 2]) === w))
      return j | 96;
  }
  // The last word asked may be the start of one; so may another of 3 letters or more, a short form ("leo dicaprio").
  if (i === q.words.length - 1 ? w.length >= (q.words.length > 1 ? 1 : 3) : w.length >= 3 && !q.small[i]) {
    const typed = q.written[i]; // a roman numeral as the letters it is ("dark vi": Dark Victory)
    for (let j = 0; j < k.length; j++)
      if (!(used & (1 << j)) && (k[j].startsWith(w) || k[j].startsWith(typed))) return j | 32 | 512;
  }
  let found = -1;
  let cost = 0;
  for (let j = 0; q.close[i] && j < k.length; j++) {
    if (used & (1 << j)) continue;
    const d = typoOf(q, i, key, j, long);
    if (d > 0 && (found < 0 || d < cost)) {
      found = j;
      cost = d;
    }
  }
  return found < 0 ? -1 : found | 32 | (cost << 7);
}

/** The typos between the `i`th word asked and the `j`th word of a key, when forgiven (`long`: `typosBetween`), else -1; kept in `q.close`. */
function typoOf(q: Asked, i: number, key: Key, j: number, long: boolean): number {
  // Words of letters too unlike are not compared (`letterBits`): most words of the names ranked, told so before
  // looking them up. Not a number: `closeTo` may have noted its digits close ("13s" for 13).
  if (key.bits[j] !== -1 && bitCount(key.bits[j] ^ q.bits[i]) > 2 * MOST_TYPOS) return -1;
  const close = q.close[i]!;
  const word = key.words[j];
  const spoken = written(word); // a typo in a number written as a word ("thre") is against the word
  let d = close.get(word);
  if (d === undefined) {
    // A word's letters were compared above; a number's are those of its word, compared here.
    d =
      key.bits[j] === -1 && bitCount(letterBits(spoken) ^ q.bits[i]) > 2 * MOST_TYPOS
        ? MOST_TYPOS + 1
        : editsWithin(q.words[i], spoken, MOST_TYPOS);
    close.set(word, d > MOST_TYPOS ? -1 : d);
  }
  return d <= typosBetween(q.words[i], spoken, long) ? d : -1;
}

/** Whether the `i`th word asked, found nowhere among a key's words, is within its typos of one other words asked took (`used`). */
function taken(q: Asked, i: number, key: Key, used: number, long: boolean): boolean {
  for (let j = 0; q.close[i] && j < key.words.length; j++)
    if (used & (1 << j) && typoOf(q, i, key, j, long) > 0) return true;
  return false;
}

/** An entry's weight and keys taken apart (kept), and its best fit (and which key gave it) in the search that last ranked it. */
interface Parts {
  weight: number;
  keys: Key[];
  rankedBy: number;
  best: Fit;
  which: number;
}

/** An entry a search found, and which of its keys it shows (the name, when one of them, that answered). */
export interface Pick {
  entry: number;
  key: number;
}

/** What `ranked` finds: how many names answer, the best and the tenth's rank, and the first ten. */
interface Ranked {
  length: number;
  best: number;
  worst: number;
  picks: Pick[];
}

/** The best rank of a name that leaves a word asked out (`fit`: a small word or an initial). */
const UNASKED = 12;

/** Names found by a second word asked from which `otherwise` narrows them (`rankedShortLast` too). */
const NARROWED_FROM = 48;

/** Words whose comparison with the vocabulary `near` keeps (a few searches' worth; all forgotten at once past it). */
const NEARBY_KEPT = 64;

/**
 * Entries found, each once, in the order found: each marked in an array of
 * the index with the mark of the last list that took it (a set of a few
 * hundred entries cost a tenth of "50 typo-prone words"). A list knows
 * what it holds until a later one takes the same entry.
 */
class Found {
  readonly list: number[] = [];
  private readonly marks: Int32Array;
  private readonly mark: number;

  constructor(marks: Int32Array, mark: number) {
    [this.marks, this.mark] = [marks, mark];
  }

  add(entry: number) {
    if (this.marks[entry] === this.mark) return;
    this.marks[entry] = this.mark;
    this.list.push(entry);
  }

  has(entry: number): boolean {
    return this.marks[entry] === this.mark;
  }
}

/** The stored files a search must read before it can answer: their places in the index's list of files (the core is 0). */
export class NeedFiles {
  readonly files: number[];
  constructor(files: number[]) {
    this.files = files;
  }
}

/** Stored files of rows at hand, by their place in the index's list of files. */
export type SearchFiles = ReadonlyMap<number, Lines>;

export class SearchIndex {
  /** The vocabulary's runs by length (`storedFiles`): where each length's run starts, its words, and where its first word is among all words (for `bits`). */
  private readonly vocabulary: string;
  private readonly digits: number;
  private readonly runAt: number[] = [];
  private readonly runWords: number[] = [];
  private readonly runFirst: number[] = [];
  private readonly wordCount: number;
  /** Postings read, by word (maps, not arrays of 13,000 or 15,000 slots: making those cost a fresh isolate 2 to 3 ms). */
  private readonly postingCache = new Map<number, Int32Array>();
  /** Each word's postings and each entry's keys, in the core (`storedFiles`). */
  private readonly postingLines: Lines;
  private readonly keyLines: Lines;
  /** Entries in a file of rows; the index's files: the core (0), then the files of rows. */
  private readonly rowsPer: number;
  readonly files: number;
  /** The last words compared with the vocabulary, by typos and word: what `near` found (word, edits, place, …). A search asked again with the files it lacked compares none again. */
  private readonly nearby = new Map<string, (string | number)[]>();
  /** Each entry's weight and keys taken apart, as searches first rank it (kept: a later search takes none apart again). */
  private readonly keyParts = new Map<number, Parts>();
  /** Per entry, the mark of the last list of entries found that took it (`Found`), and the last mark given. */
  private marks: Int32Array | null = null;
  private lastMark = 0;
  /** The letters of each word (`letterBits`) by its place among the runs, 0 until first compared. */
  private bits: Int32Array | null = null;
  /** The build's answers (`COMMON_CANDIDATES`), as stored, and by text once one is asked. */
  private readonly answerBlock: string;
  private answers: Map<string, string> | null = null;

  private constructor(blocks: string[]) {
    const header = blocks[0].split(' ').map(Number);
    if (header.length !== 5) throw new Error('a search index of another format');
    if (!header.every((n) => Number.isSafeInteger(n) && n >= 0) || !(header[1] && header[3]))
      throw new Error('a search index with a damaged header');
    const [entries, rowsPer, rowFiles, digits, wordCount] = header;
    [this.vocabulary, this.digits, this.wordCount] = [blocks[2], digits, wordCount];
    let [at, first] = [0, 0];
    blocks[1].split(' ').forEach((text, length) => {
      const n = Number(text);
      if (!Number.isSafeInteger(n) || n < 0 || (length === 0 && n > 0))
        throw new Error('a search index with a damaged header');
      [this.runAt[length], this.runWords[length], this.runFirst[length]] = [at, n, first];
      at += n * (length + digits);
      first += n;
    });
    if (first !== wordCount || at !== this.vocabulary.length || 36 ** digits < wordCount)
      throw new Error('a search index whose vocabulary disagrees with its header');
    this.postingLines = new Lines(blocks[3], blocks[4]);
    this.answerBlock = blocks[7];
    this.keyLines = new Lines(blocks[5], blocks[6]);
    if (
      rowFiles !== Math.ceil(entries / rowsPer) ||
      this.postingLines.length !== wordCount ||
      this.keyLines.length !== entries
    )
      throw new Error('a search index whose header disagrees');
    this.rowsPer = rowsPer;
    this.files = 1 + rowFiles;
  }

  /** An index from its stored core (`storedFiles`); rows are read from their own files as searches show them. */
  static parse(text: string): SearchIndex {
    const blocks = text.split('\u0000');
    if (blocks.length !== 8)
      throw new Error(
        blocks.length === 7 || blocks.length === 3 || blocks.length === 2
          ? 'a search index of another format'
          : 'not a search index',
      );
    return new SearchIndex(blocks);
  }

  /**
   * Entries found for `text` (whose search key is `key`), best first, at
   * most SEARCH_LIMIT; none for a text with no letter or digit. Or, when a
   * file of rows it needs is not among `files`, the files to read: the
   * caller reads them and asks again with them too (a search is the same
   * each time, so the next round answers).
   */
  find(text: string, key: string, files: SearchFiles): SearchResult[] | NeedFiles {
    try {
      const found = this.found(text, key, files);
      this.need(
        found.map((pick) => pick.entry),
        files,
      );
      return found.map((pick) => resultOf(this.row(pick.entry, files), pick.key));
    } catch (error) {
      if (error instanceof NeedFiles) return error;
      throw error;
    }
  }

  /** The entries a search finds, best first, each with the key it shows (`find`): answered by the build when it made the answer (`COMMON_CANDIDATES`). */
  found(text: string, key: string, files: SearchFiles): Pick[] {
    if (key === '') return [];
    const q = asked(text, key);
    return this.answerOf(q) ?? this.search(q, files);
  }

  /**
   * Readies the index before any search: every word's letters (`bits`,
   * else made as `near` first meets them), and one search of READY_TEXT,
   * so its code is compiled. What that search found, compared or took
   * apart is not kept: a later search meets the index as if asked first.
   * The Worker runs this as its isolate starts (adapters/cloudflare.ts).
   */
  ready(): void {
    for (let length = 1; length < this.runWords.length; length++)
      for (let n = 0; n < this.runWords[length]; n++) this.lettersOf(length, n);
    try {
      this.found(READY_TEXT, searchKey(READY_TEXT), new Map());
    } catch (error) {
      if (!(error instanceof NeedFiles)) throw error; // it found names: their rows were not asked for
    }
    this.nearby.clear();
    this.keyParts.clear();
    this.postingCache.clear();
  }

  /** The build's answer to the words asked (`COMMON_CANDIDATES`), or null: when they are all a text it answered, as written. */
  private answerOf(q: Asked): Pick[] | null {
    if (this.answerBlock === '' || q.words.some((w, i) => w !== q.written[i])) return null;
    if (!this.answers) {
      this.answers = new Map();
      for (const line of this.answerBlock.split('\n')) {
        const tab = line.indexOf('\t');
        this.answers.set(line.slice(0, tab), line.slice(tab + 1));
      }
    }
    const answer = this.answers.get(q.written.join(' '));
    if (answer === undefined) return null;
    return answer === ''
      ? []
      : answer.split(',').map((pick) => {
          const [entry, key = 0] = pick.split('.').map((n) => parseInt(n, 36));
          if (!(entry < this.keyLines.length)) throw new Error('a search index with an answer past its entries');
          return { entry, key };
        });
  }

  private search(q: Asked, files: SearchFiles): Pick[] {
    // The most telling words first: the longest that are neither small words, years nor a short start; then any, a short
    // start last (the names holding it whole miss those it starts: "a ha" is A Hard Day's Night, not Lee Ha Jun).
    const weak = (i: number) =>
      i === q.words.length - 1 && i > 0 && q.words[i].length < 3
        ? 2
        : Number(SMALL.has(q.words[i]) || isYear(q.words[i]));
    // Among those, a word forgiven one typo before one forgiven two (comparing it with every word of the index costs less).
    const typos = (i: number) => Math.min(1, mostTypos(q.words[i]) - 1);
    // And a word the index has as it is before one it has not (a typo, or words run together, find more names to rank).
    const known = q.words.map((w) => this.has(w));
    const unknown = (i: number) => Number(!known[i]);
    const order = q.words
      .map((w, i) => i)
      .sort(
        (a, b) =>
          weak(a) - weak(b) ||
          unknown(a) - unknown(b) ||
          (q.words[a].length >= 4 && q.words[b].length >= 4 ? typos(a) - typos(b) : 0) ||
          q.words[b].length - q.words[a].length ||
          a - b,
      );
    // Names the second word finds, when the first found none, hold the first otherwise than `candidates` finds it.
    let first = -1;
    const narrowed = (found: Found) => (first < 0 ? found : this.otherwise(q, first, found)).list;
    for (const i of order.slice(0, 2)) {
      // A word the index has as written first finds the names holding it so, without comparing it with every word of the
      // index: enough unless the best of them needs two typos elsewhere (the word itself may then be the one mistyped).
      const asWritten = known[i] ? this.rankedShortLast(q, narrowed(this.candidates(q, i, false)), files) : null;
      if (asWritten && asWritten.length > 0 && asWritten.best < TWO_TYPOS) return asWritten.picks;
      // A word forgiven no typo (`closeTo`) finds the same names either way: they are ranked once.
      const found =
        asWritten && !q.close[i] ? asWritten : this.rankedShortLast(q, narrowed(this.candidates(q, i, true)), files);
      if (found.length > 0) return found.picks;
      const w = q.words[i];
      if (!SMALL.has(w) && w.length > 1 && !isYear(w)) first = i; // a word every name found must hold
    }
    return [];
  }

  /**
   * Of `found`, the entries where the `i`th word asked may stand otherwise
   * than `candidates` finds it: as the start of a word (asked before the
   * last), or within two typos (a long name forgives more). The others hold
   * it only as the names `candidates` found for it, none of which answered
   * (the same names, the same answer). Only a long list is narrowed: looking
   * for the word's starts and near words costs about as much as ranking a
   * few dozen names.
   */
  private otherwise(q: Asked, i: number, found: Found): Found {
    if (found.list.length < NARROWED_FROM) return found;
    const may = this.newFound(); // an entry taken into it is no longer in `found`: it is taken once
    const add = (at: number) => {
      if (at >= 0) for (const entry of this.postings(at)) if (found.has(entry)) may.add(entry);
    };
    const [w, typed] = [q.words[i], q.written[i]];
    for (const start of w.length >= 3 ? new Set([w, typed]) : []) for (const at of this.startingWith(start)) add(at);
    this.near(w, MOST_TYPOS, (word, edits, at) => add(at));
    for (let n = 1; n < NUMBER_WORDS.length; n++)
      if (editsToNumber(w, q.bits[i], n) <= MOST_TYPOS) add(this.at(String(n)));
    return may;
  }

  /** Entries holding the `i`th word asked: as written, as a start (the last word), within its typos, joined with its neighbour, or split in two. */
  private candidates(q: Asked, i: number, typos: boolean): Found {
    const w = q.words[i];
    const out = this.newFound();
    const add = (word: number) => {
      for (const entry of this.postings(word)) out.add(entry);
    };
    const exact = (word: string) => {
      const at = this.at(word);
      if (at >= 0) add(at);
    };
    /** The entries holding both words (postings are in ascending order). */
    const both = (a: number, b: number) => {
      const [x, y] = [this.postings(a), this.postings(b)];
      for (let i = 0, j = 0; i < x.length && j < y.length;) {
        if (x[i] < y[j]) i++;
        else if (x[i] > y[j]) j++;
        else {
          out.add(x[i]);
          i++;
          j++;
        }
      }
    };
    if (i === q.words.length - 1 && w.length >= 3) {
      for (const at of this.startingWith(w)) {
        if (out.list.length >= 4000) break;
        add(at);
      }
    }
    for (const pair of [q.pairs[i], i > 0 ? q.pairs[i - 1] : null]) if (pair !== null) exact(pair);
    // Two or three words of a name run together: the names holding the first and the last.
    const at = (word: string) => this.at(NUMBERS.get(word) ?? word);
    for (let cut = 1; cut < w.length && w.length >= 4; cut++) {
      const first = at(w.slice(0, cut));
      if (first < 0) continue;
      const rest = w.slice(cut);
      const last = at(rest);
      if (last >= 0) both(first, last);
      else
        for (let second = 1; second < rest.length; second++)
          if (at(rest.slice(0, second)) >= 0 && at(rest.slice(second)) >= 0) both(first, at(rest.slice(second)));
    }
    if (q.close[i] && typos)
      this.closeTo(q, i, (at) => {
        if (at >= 0) add(at);
      });
    else exact(w);
    return out;
  }

  /** The index's words within the typos forgiven the `i`th word asked, each noted with its edits, and handed to `add` by their places in the vocabulary (-1: a number the index lacks). */
  private closeTo(q: Asked, i: number, add: (at: number) => void) {
    const w = q.words[i];
    this.near(w, mostTypos(w), (word, edits, at) => {
      q.close[i]!.set(word, edits);
      if (edits <= typosBetween(w, word, q.long)) add(at);
    });
    // Numbers are in the index as digits: a typo in one written as a word ("thre") is against the word.
    for (let n = 1; n < NUMBER_WORDS.length; n++) {
      const edits = editsToNumber(w, q.bits[i], n);
      if (edits > 0 && edits <= typosBetween(w, NUMBER_WORDS[n], q.long)) {
        q.close[i]!.set(String(n), edits);
        add(this.at(String(n)));
      }
    }
  }

  /** Every word within `typos` of `word` (and the word itself), with its edits and its place in the vocabulary. */
  private near(word: string, typos: number, add: (word: string, edits: number, at: number) => void) {
    if (typos === 0) {
      const at = this.at(word);
      if (at >= 0) add(word, 0, at);
      return;
    }
    const memo = `${typos}${word}`;
    let found = this.nearby.get(memo);
    if (!found) {
      found = [];
      const mine = letterBits(word);
      for (
        let length = Math.max(1, word.length - typos);
        length <= word.length + typos && length < this.runWords.length;
        length++
      ) {
        for (let n = 0; n < this.runWords[length]; n++) {
          // Read in place: a cold search compares thousands of words and cuts out only the few alike.
          if (bitCount(this.lettersOf(length, n) ^ mine) > 2 * typos) continue;
          const at = this.wordAt(length, n);
          const other = this.vocabulary.slice(at, at + length);
          const edits = editsWithin(word, other, typos);
          if (edits <= typos) found.push(other, edits, this.sortedPlace(length, n));
        }
      }
      if (this.nearby.size >= NEARBY_KEPT) this.nearby.clear();
      this.nearby.set(memo, found);
    }
    for (let n = 0; n < found.length; n += 3) add(found[n] as string, found[n + 1] as number, found[n + 2] as number);
  }

  /** The letters (`letterBits`) of the `n`th word of the run of words of `length`, made as first needed and kept. */
  private lettersOf(length: number, n: number): number {
    const bits = (this.bits ??= new Int32Array(this.wordCount));
    const at = this.runFirst[length] + n;
    if (bits[at] === 0) bits[at] = letterBits(this.vocabulary, this.wordAt(length, n), length);
    return bits[at];
  }

  private has(word: string): boolean {
    return this.at(word) >= 0;
  }

  /** Where the `n`th word of the run of words of `length` starts in the vocabulary. */
  private wordAt(length: number, n: number): number {
    return this.runAt[length] + n * (length + this.digits);
  }

  /** Whether the `n`th word of the run of words of `length` sorts before `word`, read in place (a binary search cuts out no word). */
  private before(length: number, n: number, word: string): boolean {
    const at = this.wordAt(length, n);
    for (let c = 0; c < length && c < word.length; c++) {
      const d = this.vocabulary.charCodeAt(at + c) - word.charCodeAt(c);
      if (d !== 0) return d < 0;
    }
    return length < word.length;
  }

  /** The place in the sorted vocabulary of the `n`th word of the run of `length`. */
  private sortedPlace(length: number, n: number): number {
    const at = this.runAt[length] + n * (length + this.digits) + length;
    return parseInt(this.vocabulary.slice(at, at + this.digits), 36);
  }

  /** The first of the run of words of `word`'s length at or after it, or of `length` when given (a start of its words). */
  private lowerBound(word: string, length = word.length): number {
    let [low, high] = [0, this.runWords[length] ?? 0];
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.before(length, mid, word)) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** A word's place in the sorted vocabulary, or -1. */
  private at(word: string): number {
    const n = this.lowerBound(word);
    return n < (this.runWords[word.length] ?? 0) && this.vocabulary.startsWith(word, this.wordAt(word.length, n))
      ? this.sortedPlace(word.length, n)
      : -1;
  }

  /** The places of the words starting with `start` (it included), in the vocabulary's order. */
  private startingWith(start: string): number[] {
    const found: number[] = [];
    for (let length = start.length; length < this.runWords.length; length++) {
      for (
        let n = this.lowerBound(start, length);
        n < this.runWords[length] && this.vocabulary.startsWith(start, this.wordAt(length, n));
        n++
      )
        found.push(this.sortedPlace(length, n));
    }
    return found.sort((a, b) => a - b);
  }

  /** A word's postings (entries, ascending), kept once cut out of the core. */
  private postings(word: number): Int32Array {
    let list = this.postingCache.get(word);
    if (!list) {
      const parts = this.postingLines.line(word).split(',');
      list = new Int32Array(parts.length);
      for (let i = 0; i < parts.length; i++) list[i] = parseInt(parts[i], 36);
      this.postingCache.set(word, list);
    }
    return list;
  }

  /** A new list of entries found. */
  private newFound(): Found {
    if (!this.marks || this.lastMark === 2 ** 31 - 1)
      [this.marks, this.lastMark] = [new Int32Array(this.keyLines.length), 0];
    return new Found(this.marks, ++this.lastMark);
  }

  /** An entry's weight and keys taken apart, kept. */
  private partsOf(entry: number): Parts {
    let parts = this.keyParts.get(entry);
    if (!parts) this.keyParts.set(entry, (parts = this.keyPartsOf(entry)));
    return parts;
  }

  /**
   * `ranked`, first over only the names that may hold the last word asked
   * when it has one or two letters after others ("the g": names holding a
   * word starting with "g", not all 1,733 holding "the"): a name that does
   * not ranks UNASKED or worse (the word left out), or not at all, so when
   * ten of those rank better, they are the answer; and when the word is one
   * every name must hold (two letters, no small word), those are all that rank.
   */
  private rankedShortLast(q: Asked, candidates: readonly number[], files: SearchFiles): Ranked {
    const last = q.words.length - 1;
    if (last === 0 || q.words[last].length > 2 || candidates.length < NARROWED_FROM)
      return this.ranked(q, candidates, files);
    const [w, typed, pair] = [q.words[last], q.written[last], q.pairs[last - 1]];
    // A key without the letters of the word, as typed, or with the word before it as one, has no word that is either.
    const mayHold = ({ letters }: Key) =>
      (q.bits[last] & ~letters) === 0 ||
      (q.typedBits[last] & ~letters) === 0 ||
      (pair !== null && (q.pairBits[last - 1] & ~letters) === 0);
    const holding: number[] = [];
    for (const entry of candidates)
      if (
        this.partsOf(entry).keys.some(
          (key) =>
            (mayHold(key) && key.words.some((k) => k.startsWith(w) || k.startsWith(typed) || k === pair)) ||
            key.compact === q.compact ||
            key.bare === q.bare ||
            key.compact === q.compactNoYear ||
            key.bare === q.bareNoYear,
        )
      )
        holding.push(entry);
    const found = this.ranked(q, holding, files);
    return found.worst < UNASKED || q.required.includes(last) ? found : this.ranked(q, candidates, files);
  }

  /** An entry's weight and its keys taken apart (its line of keys is the weight, then each key, `|` between). */
  private keyPartsOf(entry: number): Parts {
    if (entry >= this.keyLines.length) throw new Error('a search index with a posting past its entries');
    const [weight, ...keys] = this.keyLines.line(entry).split('|');
    return { weight: Number(weight), keys: keys.map(keyOf), rankedBy: 0, best: NO_FIT, which: 0 };
  }

  /** The file of rows holding an entry's. */
  private rowFile(entry: number): number {
    return 1 + Math.floor(entry / this.rowsPer);
  }

  /** An entry's row, from its file of rows (`need` asked for it). */
  private row(entry: number, files: SearchFiles): string {
    const file = this.rowFile(entry);
    const lines = files.get(file);
    if (!lines) throw new NeedFiles([file]);
    const line = entry - (file - 1) * this.rowsPer;
    if (line >= lines.length) throw new Error('a search index with a file too short');
    return lines.line(line);
  }

  /** Asks for every file of rows among those of `entries` not at hand, all at once (one round of reads rather than one per file). */
  private need(entries: Iterable<number>, files: SearchFiles) {
    const missing = new Set<number>();
    for (const entry of entries) if (!files.has(this.rowFile(entry))) missing.add(this.rowFile(entry));
    if (missing.size > 0) throw new NeedFiles([...missing].sort((a, b) => a - b));
  }

  /** The candidates that answer every word asked, best first, as results. */
  private ranked(q: Asked, candidates: readonly number[], files: SearchFiles): Ranked {
    const hits: { entry: number; rank: number; year: number; weight: number; starts: boolean; key: number }[] = [];
    for (const entry of candidates) {
      const parts = this.partsOf(entry);
      // A name found twice by a search (`rankedShortLast`, or two words asked) is ranked once.
      if (parts.rankedBy !== q.id) {
        [parts.rankedBy, parts.best, parts.which] = [q.id, NO_FIT, 0];
        for (let n = 0; n < parts.keys.length; n++) {
          const f = fit(q, parts.keys[n]);
          if (f >= 0 && (parts.best < 0 || f < parts.best)) [parts.best, parts.which] = [f, n];
        }
      }
      const { weight, best, which } = parts;
      if (best < 0) continue;
      hits.push({ entry, rank: best >> 2, year: (best >> 1) & 1, weight, starts: (best & 1) === 0, key: which });
    }
    if (hits.length === 0) return { length: 0, best: -1, worst: Infinity, picks: [] };
    const shown = (hit: { rank: number; year: number }) => hit.rank === 1 || hit.year === 1;
    type Hit = (typeof hits)[number];
    const order = (a: Hit, b: Hit) =>
      a.rank - b.rank ||
      a.year - b.year ||
      b.weight - a.weight ||
      Number(b.starts) - Number(a.starts) ||
      a.entry - b.entry;
    // Rows move only the hits they are read for up (the name exactly as asked, the year asked), so what is shown is among
    // those and the best of the others as they stand: their rows are asked for in one round, not two.
    const [read, first] = [hits.filter(shown), firstOf(hits, order, SEARCH_LIMIT)];
    this.need(
      [...read, ...first].map((hit) => hit.entry),
      files,
    );
    for (const hit of read) {
      const row = this.row(hit.entry, files);
      if (hit.rank === 1) {
        // The name exactly as asked: first, and shown as asked when the entry has several.
        const exactly = row.slice(0, row.indexOf('\t')).split('|').indexOf(q.text);
        if (exactly >= 0) [hit.rank, hit.key] = [0, exactly];
        // A category named so, after a film, person or company named so, unless the text names an award as people do ("best actress").
        else if (row.split('\t', 2)[1] === KIND_CODES.category && q.words[0] !== 'best') hit.rank = 2;
      }
      if (hit.year === 1 && q.years.some((y) => yearFits(row, y))) hit.year = 0;
    }
    // None read, none moved: the first ten stand.
    const best = read.length === 0 ? first : firstOf(hits, order, SEARCH_LIMIT);
    return {
      length: hits.length,
      best: best[0].rank,
      // The tenth's rank (none yet: no rank is as bad).
      worst: best.length < SEARCH_LIMIT ? Infinity : best[best.length - 1].rank,
      picks: best.map(({ entry, key }) => ({ entry, key })),
    };
  }
}

/** The first `k` of `list` in `order` (which ties nothing), best first: what sorting it would give, without sorting thousands. */
function firstOf<T>(list: T[], order: (a: T, b: T) => number, k: number): T[] {
  const top: T[] = [];
  for (const item of list) {
    if (top.length === k) {
      if (order(item, top[k - 1]) >= 0) continue;
      top.pop();
    }
    let at = top.length;
    top.push(item);
    for (; at > 0 && order(item, top[at - 1]) < 0; at--) top[at] = top[at - 1];
    top[at] = item;
  }
  return top;
}

/** Whether a result's row is of the year asked: a film of that year, or a name nominated at the ceremony of that year or the next. */
function yearFits(row: string, year: string): boolean {
  const [, , , , firstYear, lastYear, , filmYear] = row.split('\t');
  if (filmYear) return filmYear.startsWith(year);
  return Number(firstYear) <= Number(year) + 1 && Number(year) <= Number(lastYear);
}

/**
 * A row of the index as a result. A row holds: the entry's names (`|`
 * between, the most used first), kind code, nominations, wins, first and
 * last held year, IMDb id, film year, and for a category its other names
 * (`|` between) and every name of its award with its years (`name~first~last`,
 * `|` between). The name shown is the one whose key matched, when it is one
 * of the names.
 */
function resultOf(row: string, key: number): SearchResult {
  // Last, its record's path where its id does not give it (a category's award's; a name without an id that stands for one id's thing).
  const [names, code, nominations, wins, firstYear, lastYear, id, filmYear, others, awardNames, record] =
    row.split('\t');
  const all = names.split('|');
  const name = all[key < all.length ? key : 0];
  const kind = KINDS[code];
  const path = id
    ? `/${id.startsWith('tt') ? 'title' : 'name'}/id=${id}`
    : `/${kind === 'category' ? 'award' : 'person'}/name=${encodeURIComponent(name)}`;
  const found: SearchResult = {
    name,
    kind,
    nominations: Number(nominations),
    wins: Number(wins),
    firstYear,
    lastYear,
    path,
  };
  if (id) found.record = recordPath(id);
  else if (record) found.record = record;
  if (id) found.id = id;
  if (filmYear) found.filmYear = filmYear;
  if (kind === 'category') {
    found.otherNames = others ? others.split('|') : [];
    found.awardNames = awardNames
      ? awardNames.split('|').map((n) => {
          const [award, first, last] = n.split('~');
          return { name: award, firstYear: first, lastYear: last };
        })
      : [];
  }
  return found;
}

/** The index's name in the dataset (`/dataset/file=search.ndjson`), which the offline client searches. */
export const SEARCH_DATASET_FILE = 'search.ndjson';

/**
 * The stored files of an index as one file of the dataset: a first line
 * saying what it is (an object: its licence and attribution, as every file
 * of the dataset carries them), then each stored file as a JSON string on
 * a line of its own, the core first.
 */
export const searchDatasetText = (stored: string[], about: Record<string, string>): string =>
  [about, ...stored].map((line) => JSON.stringify(line)).join('\n') + '\n';

/** The stored files a `searchDatasetText` holds; throws when the text is not one. */
export function storedOfDataset(text: string): string[] {
  const [about, ...stored] = (text.endsWith('\n') ? text.slice(0, -1).split('\n') : []).map(
    (line) => JSON.parse(line) as unknown,
  );
  if (
    about === null ||
    typeof about !== 'object' ||
    stored.length < 2 ||
    !stored.every((file) => typeof file === 'string')
  )
    throw new Error('not a search index');
  return stored as string[];
}

/** A search over an index with every stored file at hand (`storedFiles`), as the offline client, the benchmark and tests read it: answered at once. */
export function searchOver(stored: string[]): (text: string) => SearchResult[] {
  const index = SearchIndex.parse(stored[0]);
  if (index.files !== stored.length) throw new Error('a search index whose files disagree with its core');
  const files = new Map(stored.slice(1).map((text, n) => [n + 1, Lines.parse(text)]));
  return (text) => {
    const found = index.find(text, searchKey(text), files);
    if (found instanceof NeedFiles) throw new Error(`a search index without its files ${found.files.join(', ')}`);
    return found;
  };
}
