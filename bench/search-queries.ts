/**
 * The search benchmark's query set (bench/search.ts), and what each query
 * should find: drawn from the source with a seed (the benchmark picks a
 * fresh one at each run and prints it, so no fixed set becomes the target;
 * the test holds one seed above a floor), read here as the
 * data's README describes the format, with none of the build's or the
 * runtime's code, so the answers expected are the data's, not ours. Families:
 * what people type (a name as written, without its accents, with one or two
 * typos anywhere, the start of it, a surname alone, words in another order,
 * `&` for "and", a number written another way, words joined or split, no
 * leading article, a film's title and year, an award as people name it),
 * misspellings written by hand, and names never nominated (a hand-written
 * list, and first names and surnames of the source put together as no name
 * of it has them: these should find nothing).
 */

/**
 * Something a search should find: a film, person or company of the
 * source (by its IMDb id when it has one), or a category name.
 */
export interface Thing {
  /** The name as the archive serves it (the most frequent one beside an id). */
  name: string;
  /** Every name served for it. */
  names: string[];
  id?: string;
  kind: 'person' | 'company' | 'film';
  /** The source's Year column, for a film with an id. */
  filmYear?: string;
  /** Nominations naming it. */
  weight: number;
}

/** What a query should find first: a thing, any name of an award (a set of full category names), or nothing. */
export type Expected = { thing: Thing } | { award: string; names: Set<string> } | null;

export interface Query {
  family: string;
  text: string;
  expected: Expected;
}

/** A result as the judge reads it (ours or the library's). */
export interface Found {
  name: string;
  kind: string;
  id?: string;
}

/** The families, in the order the table prints them. */
export const FAMILIES = [
  'exact',
  'no accents',
  'one typo',
  'typo in first letters',
  'two typos',
  'two typos, one in first letters',
  'prefix',
  'surname alone',
  'word order',
  '& and "and"',
  'numbers',
  'joined or split',
  'no article',
  'title and year',
  'award names',
  'misspelled by hand',
  'never nominated',
] as const;

/** Lower case, without marks: what a user types who does not know the accents. */
export const plain = (text: string) =>
  text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
/** Lower case, without marks, punctuation as spaces: the words of a name. */
export const wordsOf = (text: string) =>
  plain(text)
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
/** The same, spacing set aside too: names that read the same. */
export const bare = (text: string) => wordsOf(text).replaceAll(' ', '');

/** mulberry32: the same numbers every run. */
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** The source's category names as the archive serves them (its title case), each with its award (CanonicalCategory). */
export interface SourceFacts {
  things: Thing[];
  /** Full category name (title-cased as served) -> canonical award (as written in the source). */
  awards: Map<string, string>;
}

/** The things of the source: each id once (named as most often beside it), each name served without an id once. */
export function sourceFacts(text: string, titleCase: (raw: string) => string): SourceFacts {
  const byKey = new Map<
    string,
    { names: Map<string, number>; id?: string; kind: Thing['kind']; filmYear?: string; weight: number }
  >();
  const awards = new Map<string, string>();
  const see = (name: string, id: string | undefined, kind: Thing['kind'], year: string, seen: Set<string>) => {
    if (name === '') return;
    const key = id ?? `${kind}:${name}`;
    if (seen.has(key)) return;
    seen.add(key);
    let t = byKey.get(key);
    if (!t)
      byKey.set(
        key,
        (t = {
          names: new Map(),
          id,
          kind: id ? (id.startsWith('tt') ? 'film' : id.startsWith('co') ? 'company' : 'person') : kind,
          weight: 0,
        }),
      );
    if (t.kind === 'film' && id && t.filmYear === undefined) t.filmYear = year;
    t.names.set(name, (t.names.get(name) ?? 0) + 1);
    t.weight++;
  };
  for (const line of text.split('\n').slice(1)) {
    if (line === '') continue;
    const f = line.split('\t').map((v) => v.replaceAll('\\"', '"'));
    const [year, canonical, category, film = '', filmId = '', name = '', nominees = '', nomineeIds = ''] = [
      f[1],
      f[3],
      f[4],
      f[5],
      f[6],
      f[7],
      f[8],
      f[9],
    ];
    awards.set(titleCase(category), canonical || category);
    const seen = new Set<string>();
    const filmIds = filmId.split('|');
    film
      .split('|')
      .forEach((n, i) => see(n, /^tt\d+$/.test(filmIds[i] ?? '') ? filmIds[i] : undefined, 'film', year, seen));
    const people = nominees ? nominees.split('|') : name ? [name] : [];
    const ids = nomineeIds.split('|');
    people.forEach((n, i) => {
      const id = (nominees || ids.length === 1 ? (ids[i] ?? '') : '').split(',')[0];
      see(n, /^(nm|co)\d+$/.test(id) ? id : undefined, nominees ? 'person' : 'company', year, seen);
    });
  }
  const things = [...byKey.values()].map(({ names, id, kind, filmYear, weight }) => {
    const name = [...names].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0][0];
    return {
      name,
      names: [...names.keys()],
      kind,
      weight,
      ...(id ? { id } : {}),
      ...(filmYear ? { filmYear } : {}),
    } as Thing;
  });
  return { things: things.filter((t) => bare(t.name) !== ''), awards };
}

/**
 * Numbers as people write them, the bench's own rather than imported from
 * src/shared/search.ts: the queries are written from how people type, never
 * from the tables of the search they measure.
 */
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
/** Roman numerals from 2 (I, V and X alone are more often an initial than a number). */
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

/** Award names as people say them, each with the source's CanonicalCategory it means. */
const AWARD_QUERIES: [string, string][] = [
  ['best actress', 'ACTRESS IN A LEADING ROLE'],
  ['best actor', 'ACTOR IN A LEADING ROLE'],
  ['best supporting actor', 'ACTOR IN A SUPPORTING ROLE'],
  ['best supporting actress', 'ACTRESS IN A SUPPORTING ROLE'],
  ['best foreign language film', 'INTERNATIONAL FEATURE FILM'],
  ['best foreign film', 'INTERNATIONAL FEATURE FILM'],
  ['best international feature', 'INTERNATIONAL FEATURE FILM'],
  ['best animated feature', 'ANIMATED FEATURE FILM'],
  ['best animated film', 'ANIMATED FEATURE FILM'],
  ['best original song', 'MUSIC (Original Song)'],
  ['best song', 'MUSIC (Original Song)'],
  ['best original score', 'MUSIC (Original Score)'],
  ['best director', 'DIRECTING'],
  ['best picture', 'BEST PICTURE'],
  ['best cinematography', 'CINEMATOGRAPHY'],
  ['best original screenplay', 'WRITING (Original Screenplay)'],
  ['best adapted screenplay', 'WRITING (Adapted Screenplay)'],
  ['best film editing', 'FILM EDITING'],
  ['best editing', 'FILM EDITING'],
  ['best costume design', 'COSTUME DESIGN'],
  ['best visual effects', 'VISUAL EFFECTS'],
  ['best documentary feature', 'DOCUMENTARY (Feature)'],
  ['best documentary short', 'DOCUMENTARY (Short Subject)'],
  ['best makeup and hairstyling', 'MAKEUP AND HAIRSTYLING'],
  ['best makeup', 'MAKEUP AND HAIRSTYLING'],
  ['best production design', 'ART DIRECTION'],
  ['best art direction', 'ART DIRECTION'],
  ['best sound editing', 'SOUND EDITING'],
  ['best sound mixing', 'SOUND MIXING'],
  ['best animated short', 'SHORT FILM (Animated)'],
  ['best live action short', 'SHORT FILM (Live Action)'],
  ['best casting', 'CASTING'],
  ['best actress in a leading role', 'ACTRESS IN A LEADING ROLE'],
  ['honorary award', 'HONORARY AWARD'],
  ['thalberg award', 'IRVING G. THALBERG MEMORIAL AWARD'],
  ['best original story', 'WRITING (Original Story)'],
];

/** Misspellings people really type, each with the name as served that they mean. */
const MISSPELLED: [string, string][] = [
  ['spielburg', 'Steven Spielberg'],
  ['steven speilberg', 'Steven Spielberg'],
  ['kubrik', 'Stanley Kubrick'],
  ['stanley kubric', 'Stanley Kubrick'],
  ['hitchcok', 'Alfred Hitchcock'],
  ['alfred hichcock', 'Alfred Hitchcock'],
  ['cristopher nolan', 'Christopher Nolan'],
  ['jean frenoir', 'Jean Renoir'],
  ['double idemnity', 'Double Indemnity'],
  ['the dark night', 'The Dark Knight'],
  ['scorcese', 'Martin Scorsese'],
  ['martin scorsesee', 'Martin Scorsese'],
  ['quentin tarrantino', 'Quentin Tarantino'],
  ['meryl strep', 'Meryl Streep'],
  ['merryl streep', 'Meryl Streep'],
  ['katherine hepburn', 'Katharine Hepburn'],
  ['cate blanchet', 'Cate Blanchett'],
  ['leonardo dicaprio', 'Leonardo DiCaprio'],
  ['leonardo di caprio', 'Leonardo DiCaprio'],
  ['silvester stallone', 'Sylvester Stallone'],
  ['jack nicholsen', 'Jack Nicholson'],
  ['daniel day lewis', 'Daniel Day-Lewis'],
  ['daniel daylewis', 'Daniel Day-Lewis'],
  ['phillip seymour hoffman', 'Philip Seymour Hoffman'],
  ['joaquin phoenix', 'Joaquin Phoenix'],
  ['joaquim phoenix', 'Joaquin Phoenix'],
  ['matthew mcconaghey', 'Matthew McConaughey'],
  ['mathew mcconaughey', 'Matthew McConaughey'],
  ['renee zellwegger', 'Renée Zellweger'],
  ['anthony hopkin', 'Anthony Hopkins'],
  ['guillermo del torro', 'Guillermo del Toro'],
  ['alfonso cuaron', 'Alfonso Cuarón'],
  ['inarritu', 'Alejandro G. Iñárritu'],
  ['bong joon ho', 'Bong Joon Ho'],
  ['akira kurasawa', 'Akira Kurosawa'],
  ['federico felini', 'Federico Fellini'],
  ['ingmar bergmann', 'Ingmar Bergman'],
  ['francis ford copolla', 'Francis Ford Coppola'],
  ['the godfather part 2', 'The Godfather Part II'],
  ['schindlers list', "Schindler's List"],
  ['shindler\u2019s list', "Schindler's List"],
  ['lawrence of arabia', 'Lawrence of Arabia'],
  ['laurence of arabia', 'Lawrence of Arabia'],
  ['citizen kane', 'Citizen Kane'],
  ['citizan kane', 'Citizen Kane'],
  ['one flew over the cuckoos nest', "One Flew over the Cuckoo's Nest"],
  ['silence of the lambs', 'The Silence of the Lambs'],
  ['forest gump', 'Forrest Gump'],
  ['shawshank redemtion', 'The Shawshank Redemption'],
  ['gone with the wind', 'Gone with the Wind'],
  ['casablance', 'Casablanca'],
  ['oppenhiemer', 'Oppenheimer'],
  ['parasyte', 'Parasite'],
  ['everything everywhere', 'Everything Everywhere All at Once'],
  ['la la land', 'La La Land'],
  ['lalaland', 'La La Land'],
  ['amadeus', 'Amadeus'],
  ['walt disny', 'Walt Disney'],
  ['john wiliams', 'John Williams'],
  ['hans zimer', 'Hans Zimmer'],
  ['ennio moricone', 'Ennio Morricone'],
  ['edith head', 'Edith Head'],
  ['bette davies', 'Bette Davis'],
  ['ingrid bergmann', 'Ingrid Bergman'],
];

/** People (and groups) never nominated: a search should find nothing close. Any the source names are left out. */
const NEVER: string[] = [
  'Jim Carrey',
  'Adam Sandler',
  'Jennifer Aniston',
  'Ben Stiller',
  'Vin Diesel',
  'Dwayne Johnson',
  'Jason Statham',
  'Steven Seagal',
  'Chuck Norris',
  'Jean-Claude Van Damme',
  'Tyler Perry',
  'Uwe Boll',
  'Pauly Shore',
  'Rob Schneider',
  'Kevin Hart',
  'Chris Farley',
  'David Spade',
  'Tim Allen',
  'Hilary Duff',
  'Lindsay Lohan',
  'Megan Fox',
  'Paris Hilton',
  'Kim Kardashian',
  'Sylvester Stallonee Jr',
  'Pamela Anderson',
  'Ashton Kutcher',
  'Zac Efron',
  'Channing Tatum',
  'Gerard Butler',
  'Nicolas Winding Refn',
  'Taylor Lautner',
  'Kristen Stewartson',
  'Bruce Campbell',
  'Keanu Reeves',
  'Alan Rickman',
  'Christopher Lee',
  'Pierce Brosnan',
  'Sean Bean',
  'Hugh Laurie',
  'Rowan Atkinson',
];

/** The query set drawn with `seed` (the same set for the same seed): `perFamily` generated queries in each generated family. */
export function querySet(facts: SourceFacts, perFamily = 60, seed = 38): Query[] {
  const next = seeded(seed);
  const pick = <T>(list: T[]) => list[Math.floor(next() * list.length)];
  const { things } = facts;
  const byWords = new Map<string, Thing[]>();
  for (const t of things) for (const n of t.names) byWords.set(wordsOf(n), [...(byWords.get(wordsOf(n)) ?? []), t]);
  const byBare = new Map<string, Thing[]>();
  for (const t of things) for (const n of t.names) byBare.set(bare(n), [...(byBare.get(bare(n)) ?? []), t]);
  /** A name's words without small words, numbers in digits, in order: two names alike so read the same to a search. */
  const loose = (text: string) =>
    wordsOf(text)
      .split(' ')
      .filter((w) => !['the', 'a', 'an', 'and', 'of'].includes(w))
      .map((w) =>
        NUMBER_WORDS.includes(w)
          ? String(NUMBER_WORDS.indexOf(w))
          : ROMAN.indexOf(w) > 1
            ? String(ROMAN.indexOf(w))
            : w,
      )
      .sort()
      .join(' ');
  const byLoose = new Map<string, Thing[]>();
  for (const t of things) for (const n of t.names) byLoose.set(loose(n), [...(byLoose.get(loose(n)) ?? []), t]);
  /** True when no other thing reads as `text` does (so the query can only mean `t`). */
  const onlyOne = (text: string, t: Thing) =>
    (byBare.get(bare(text)) ?? []).every((o) => o === t) && (byLoose.get(loose(text)) ?? []).every((o) => o === t);
  const queries: Query[] = [];
  const family = (
    name: string,
    make: (t: Thing) => string | null,
    pool = things,
    expect: (t: Thing, text: string) => Thing | null = (t) => t,
    count = perFamily,
  ) => {
    const seen = new Set(queries.filter((q) => q.family === name).map((q) => q.text));
    const goal = seen.size + count;
    for (let tries = 0; seen.size < goal && tries < count * 200; tries++) {
      const t = pick(pool);
      const text = make(t);
      if (text === null || seen.has(text) || bare(text) === '') continue;
      const wanted = expect(t, text);
      if (!wanted) continue;
      seen.add(text);
      queries.push({ family: name, text, expected: { thing: wanted } });
    }
  };
  const edit = (word: string, at: number): string => {
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    const op = Math.floor(next() * 4);
    const other = letters[Math.floor(next() * 26)];
    if (op === 0 && other !== word[at]) return word.slice(0, at) + other + word.slice(at + 1); // a wrong letter
    if (op === 1) return word.slice(0, at) + word.slice(at + 1); // a letter left out
    if (op === 2) return word.slice(0, at) + other + word.slice(at); // a letter too many
    if (at + 1 < word.length && word[at] !== word[at + 1])
      return word.slice(0, at) + word[at + 1] + word[at] + word.slice(at + 2); // two letters swapped
    return word.slice(0, at) + (word[at] === 'e' ? 'a' : 'e') + word.slice(at + 1);
  };
  /** One typo in a random word of 4 letters or more (`first`: in its first two letters). */
  const typo = (text: string, first: boolean, skip = -1): [string, number] | null => {
    const words = wordsOf(text).split(' ');
    const long = words.map((w, i) => i).filter((i) => words[i].length >= 4 && /^\p{L}+$/u.test(words[i]) && i !== skip);
    if (long.length === 0) return null;
    const i = pick(long);
    const at = first ? Math.floor(next() * 2) : Math.floor(next() * words[i].length);
    words[i] = edit(words[i], at);
    return [words.join(' '), i];
  };
  const names = things.filter((t) => bare(t.name).length >= 3);
  family('exact', (t) => t.name, names);
  family(
    'no accents',
    (t) => plain(t.name),
    names.filter((t) => /\p{M}/u.test(t.name.normalize('NFD'))),
  );
  family(
    'one typo',
    (t) => typo(t.name, false)?.[0] ?? null,
    names,
    (t, text) => (onlyOne(t.name, t) && byWords.get(text) === undefined ? t : null),
  );
  family(
    'typo in first letters',
    (t) => typo(t.name, true)?.[0] ?? null,
    names,
    (t, text) => (onlyOne(t.name, t) && byWords.get(text) === undefined ? t : null),
  );
  family(
    'two typos',
    (t) => {
      const once = typo(t.name, false);
      if (!once) return null;
      const long = wordsOf(t.name).split(' ')[once[1]].length >= 8;
      return typo(once[0], false, long ? -1 : once[1])?.[0] ?? null;
    },
    names.filter((t) => bare(t.name).length >= 10),
    (t, text) => (onlyOne(t.name, t) && byWords.get(text) === undefined ? t : null),
  );
  // The start of a name: its first word and the start of the next, or
  // the start of its one word; it means the heaviest name starting so.
  const starting = (prefix: string) =>
    things.filter(
      (o) => o.names.some((n) => wordsOf(n).startsWith(prefix)) && !o.names.some((n) => wordsOf(n) === prefix),
    );
  const heaviest = (list: Thing[]) => {
    const sorted = [...list].sort((a, b) => b.weight - a.weight);
    return sorted.length > 0 && (sorted.length === 1 || sorted[0].weight > sorted[1].weight) ? sorted[0] : null;
  };
  family(
    'prefix',
    (t) => {
      const words = wordsOf(t.name).split(' ');
      if (words.length === 1) return words[0].length >= 7 ? words[0].slice(0, 4 + Math.floor(next() * 3)) : null;
      return words[1].length >= 4 ? `${words[0]} ${words[1].slice(0, 2 + Math.floor(next() * 2))}` : null;
    },
    names.filter((t) => t.weight >= 2),
    (_, text) => (byWords.has(text) ? null : heaviest(starting(text))),
  );
  const wholeWord = (word: string) =>
    things.filter((o) => o.names.some((n) => ` ${wordsOf(n)} `.includes(` ${word} `)));
  family(
    'surname alone',
    (t) => {
      const words = wordsOf(t.name).split(' ');
      return words.length >= 2 && words[words.length - 1].length >= 4 ? words[words.length - 1] : null;
    },
    names.filter((t) => t.kind === 'person' && t.weight >= 3),
    (_, text) => (byWords.has(text) ? null : heaviest(wholeWord(text))),
  );
  family(
    'word order',
    (t) => {
      const words = wordsOf(t.name).split(' ');
      return words.length >= 2 && words.length <= 3 && words.every((w) => w.length >= 2)
        ? [...words].reverse().join(' ')
        : null;
    },
    names.filter((t) => t.kind === 'person'),
    (t) => (onlyOne(t.name, t) ? t : null),
  );
  family(
    '& and "and"',
    (t) =>
      t.name.includes('&')
        ? plain(t.name).replaceAll('&', 'and')
        : / and /i.test(t.name)
          ? plain(t.name).replace(/ and /g, ' & ')
          : null,
    names.filter((t) => /&| and /i.test(t.name)),
    (t) => (onlyOne(t.name, t) ? t : null),
  );
  const numberForm = (word: string): string | null => {
    const n = /^\d+$/.test(word)
      ? Number(word)
      : NUMBER_WORDS.indexOf(word) >= 0
        ? NUMBER_WORDS.indexOf(word)
        : ROMAN.indexOf(word) > 1
          ? ROMAN.indexOf(word)
          : -1;
    if (n < 1 || n > 20) return null;
    if (/^\d+$/.test(word)) return next() < 0.5 || !ROMAN[n] ? NUMBER_WORDS[n] : ROMAN[n];
    return String(n);
  };
  family(
    'numbers',
    (t) => {
      const words = wordsOf(t.name).split(' ');
      const at = words.map((w, i) => i).filter((i) => numberForm(words[i]) !== null);
      if (at.length === 0) return null;
      const i = pick(at);
      words[i] = numberForm(words[i])!;
      return words.join(' ');
    },
    names.filter((t) =>
      wordsOf(t.name)
        .split(' ')
        .some((w) => numberForm(w) !== null),
    ),
    (t) => (onlyOne(t.name, t) ? t : null),
  );
  family(
    'joined or split',
    (t) => {
      const words = wordsOf(t.name).split(' ');
      const long = words.map((w, i) => i).filter((i) => words[i].length >= 8);
      if (long.length > 0 && next() < 0.4) {
        const i = pick(long);
        const at = 3 + Math.floor(next() * (words[i].length - 5));
        words.splice(i, 1, words[i].slice(0, at), words[i].slice(at));
        return words.join(' ');
      }
      if (words.length < 2) return null;
      const i = Math.floor(next() * (words.length - 1));
      words.splice(i, 2, words[i] + words[i + 1]);
      return words.join(' ');
    },
    names,
    (t, text) => (onlyOne(t.name, t) && !byBare.has(wordsOf(text)) ? t : null),
  );
  family(
    'no article',
    (t) => (/^(the|a|an) \S/.test(wordsOf(t.name)) ? wordsOf(t.name).replace(/^(the|a|an) /, '') : null),
    names.filter((t) => t.kind === 'film'),
    (t, text) => (onlyOne(t.name, t) && !byWords.has(text) ? t : null),
  );
  // A title and its film's year; half the films share their title with another film.
  const films = things.filter((t) => t.kind === 'film' && t.id && /^\d{4}$/.test(t.filmYear ?? ''));
  const shared = films.filter((t) => (byBare.get(bare(t.name)) ?? []).filter((o) => o.kind === 'film').length >= 2);
  const yearOf = (t: Thing) => `${plain(t.name)} ${t.filmYear}`;
  family('title and year', yearOf, shared, (t) => t, perFamily / 2);
  family('title and year', yearOf, films, (t) => t, perFamily / 2);
  // Drawn after the families above, so a seed draws them as it did before this family was added.
  // A person's name with two typos, one of them in the first two letters of a word, the other in the same word when it
  // has 6 letters or more ("fred oneedl" for Fred Ponedel), else in another.
  family(
    'two typos, one in first letters',
    (t) => {
      const once = typo(t.name, true);
      if (!once) return null;
      const words = once[0].split(' ');
      if (words[once[1]].length < 6) return typo(once[0], false, once[1])?.[0] ?? null;
      words[once[1]] = edit(words[once[1]], Math.floor(next() * words[once[1]].length));
      return words.join(' ');
    },
    names.filter((t) => t.kind === 'person' && bare(t.name).length >= 10),
    (t, text) => (onlyOne(t.name, t) && byWords.get(text) === undefined ? t : null),
  );
  const awardNames = (canonical: string) =>
    new Set([...facts.awards].filter(([, a]) => a === canonical).map(([n]) => n));
  for (const [text, canonical] of AWARD_QUERIES)
    queries.push({ family: 'award names', text, expected: { award: canonical, names: awardNames(canonical) } });
  for (const [text, name] of MISSPELLED) {
    const wanted = heaviest(things.filter((t) => t.name === name)) ?? things.find((t) => t.name === name);
    if (!wanted) throw new Error(`search benchmark: "${name}" is not a name of the source`);
    queries.push({ family: 'misspelled by hand', text, expected: { thing: wanted } });
  }
  const known = new Set(things.map((t) => bare(t.name)));
  for (const name of NEVER)
    if (!known.has(bare(name))) queries.push({ family: 'never nominated', text: plain(name), expected: null });
  // A first name of one person and a surname of another, as no name of the source has both words.
  const people = names.filter((t) => t.kind === 'person' && /^\p{L}+ \p{L}{4,}$/u.test(wordsOf(t.name)));
  const nameWords = things.map((t) => t.names.map((n) => ` ${wordsOf(n)} `));
  const drawn = new Set<string>();
  for (let tries = 0; drawn.size < perFamily / 2 && tries < perFamily * 200; tries++) {
    const [first, last] = [wordsOf(pick(people).name).split(' ')[0], wordsOf(pick(people).name).split(' ')[1]];
    const text = `${first} ${last}`;
    if (drawn.has(text) || nameWords.some((ns) => ns.some((n) => n.includes(` ${first} `) && n.includes(` ${last} `))))
      continue;
    drawn.add(text);
    queries.push({ family: 'never nominated', text, expected: null });
  }
  return queries;
}

/**
 * Whether a result is what the query means: the same thing (by id where
 * both have one), or, but for a title and year, a name that reads the same.
 */
export function isExpected(found: Found, query: Query): boolean {
  const { expected } = query;
  if (expected === null) return false;
  if ('award' in expected) return found.kind === 'category' && expected.names.has(found.name);
  const { thing } = expected;
  if (found.kind === 'category') return false;
  const alike = query.family !== 'title and year' && thing.names.some((n) => bare(n) === bare(found.name));
  if (found.id !== undefined && thing.id !== undefined) return found.id === thing.id || alike;
  return thing.names.includes(found.name) || alike;
}

/** A search as the benchmark runs it: a text in, its results best first. */
export type Engine = (text: string) => Found[];

/** The family that counts every query but the names never nominated. */
export const ALL = 'all (names never nominated aside)';

export interface Figures {
  queries: number;
  top1: number;
  top3: number;
  none: number;
}

/** Per family, and over all queries: how many found what they should first, in the first three, and found nothing. */
export function score(engine: Engine, queries: Query[]): Map<string, Figures> {
  const out = new Map<string, Figures>();
  const add = (family: string, results: Found[], query: Query) => {
    const f = out.get(family) ?? { queries: 0, top1: 0, top3: 0, none: 0 };
    f.queries++;
    if (results.length === 0) f.none++;
    if (results.slice(0, 1).some((r) => isExpected(r, query))) f.top1++;
    if (results.slice(0, 3).some((r) => isExpected(r, query))) f.top3++;
    out.set(family, f);
  };
  for (const query of queries) {
    const results = engine(query.text);
    add(query.family, results, query);
    if (query.expected !== null) add(ALL, results, query);
  }
  return out;
}
