/**
 * The OpenAPI 3.1 document, generated at build time from what the runtime
 * itself uses: the route table (src/shared/routes.ts), the error messages
 * (src/shared/messages.ts) and the shapes in src/shared/types.ts. The shapes'
 * schemas come from build/site/openapi-schemas.json, which `npm run
 * openapi:schemas` derives from types.ts (build/site/openapi-schemas.ts) and the
 * tests hold to it, so the build reads JSON and needs no TypeScript; what a
 * type cannot say (patterns, bounds) is added here.
 */
import { readFileSync } from 'node:fs';
import { MESSAGES } from '../../src/shared/messages.ts';
import { servedSource } from '../../src/api/handler.ts';
import { ALLOWED_METHODS, DATA_CACHE_CONTROL } from '../../src/http/reply.ts';
import { HEALTH_PATH } from '../../src/http/request.ts';
import { KEY_PREFIX } from '../../src/keys/secrets.ts';
import {
  DATASET_FILE_NAME,
  ID_FORMS,
  MAX_NAME_LENGTH,
  MAX_SEARCH_LENGTH,
  type Param,
  type Route,
  ROUTES,
  type Tag,
  template,
} from '../../src/shared/routes.ts';
import { SEARCH_LIMIT } from '../../src/shared/search.ts';
import type { Manifest } from '../../src/shared/types.ts';
import { RANKING, RANKING_ERRORS } from '../../src/client/client.ts';

export const OPENAPI_VERSION = '3.1.0';
export const API_VERSION = '1.0.0';
/**
 * `servers` when PUBLIC_BASE_URL is not set: relative, so the document is right
 * wherever it is served from (any port, any host), as OpenAPI 3.1 allows.
 */
export const DEFAULT_BASE_URL = '/';
/** The component schemas derived from src/shared/types.ts, checked in (npm run openapi:schemas writes it). */
export const SCHEMAS_FILE = new URL('./openapi-schemas.json', import.meta.url);

type Schema = Record<string, unknown>;

export interface OpenApiOptions {
  /** Lowest and highest held year, for the descriptions (the manifest's `yearRange`). */
  yearRange: [number, number];
  /** Where the API is served (PUBLIC_BASE_URL); default `/`, relative to the document. */
  baseUrl?: string;
  /** The manifest's record of the archive served: `info` names its source revision. */
  source?: Manifest['source'];
}

/** One sentence naming the source revision served, for `info.description`. */
function revisionSentence(source: Manifest['source'] | undefined): string[] {
  if (!source) return [];
  const served = servedSource(source);
  const which = served.commit
    ? `\`oscars.csv\` of ${served.repository} at commit \`${served.commit}\`${served.date ? ` (${served.date})` : ''}`
    : `a source of unknown revision${served.date ? ` pinned ${served.date}` : ''}`;
  return [
    '',
    `Data served: ${which}, sha256 \`${served.sha256}\`, ${served.nominations} nominations${served.sample ? ' (the small sample)' : ''}.`,
  ];
}

/**
 * Component name for each exported type of types.ts that answers
 * carry (build/site/openapi-schemas.ts derives their schemas).
 */
export const COMPONENTS = {
  Nomination: 'Nomination',
  Category: 'Category',
  Ceremony: 'Ceremony',
  Archive: 'Archive',
  PersonMatch: 'PersonMatch',
  FilmMatch: 'FilmMatch',
  CategoryMatch: 'CategoryMatch',
  CategoryYearMatch: 'CategoryYearMatch',
  SearchResult: 'SearchResult',
  AwardName: 'AwardName',
  CategoryName: 'CategoryName',
  DatasetList: 'DatasetList',
  DatasetEntry: 'DatasetEntry',
  Error: 'ErrorBody',
  RateLimitError: 'RateLimitErrorBody',
  Health: 'HealthBody',
  ArchiveHealth: 'ArchiveHealth',
  FilmRecord: 'FilmRecord',
  PeopleRecord: 'PeopleRecord',
  CeremonyRecord: 'CeremonyRecord',
  AwardSummary: 'AwardSummary',
  AwardRecord: 'AwardRecord',
  RecordNomination: 'RecordNomination',
  RecordFilm: 'RecordFilm',
  RecordName: 'RecordName',
  Credit: 'Credit',
  Ranks: 'Ranks',
  Standing: 'Standing',
  ClassStanding: 'ClassStanding',
  AwardStanding: 'AwardStanding',
  CeremonyRef: 'CeremonyRef',
  CeremonyHeld: 'CeremonyHeld',
  CeremonyCategory: 'CeremonyCategory',
  Ranking: 'Ranking',
  RankingEntry: 'RankingEntry',
} as const;
export type ComponentName = keyof typeof COMPONENTS;

const ref = (name: ComponentName) => ({ $ref: `#/components/schemas/${name}` });

/**
 * What TypeScript cannot say: value shapes of some fields. Each target must
 * exist in the generated schemas, so a renamed field fails here rather than
 * silently losing its constraint.
 */
const YEAR_KEY = '^[0-9]{4}$';
const REFINEMENTS: Record<string, Schema> = {
  'PersonMatch.year': { pattern: YEAR_KEY },
  'CategoryMatch.year': { pattern: YEAR_KEY },
  'RateLimitError.retryAfter': { type: 'integer', minimum: 0 },
  'Health.status': { const: 'ok' },
  'ArchiveHealth.revision': { pattern: '^[0-9a-f]{64}$' },
  ...Object.fromEntries(
    ['firstYear', 'lastYear', 'years', 'categories', 'nominations'].map((f) => [
      `ArchiveHealth.${f}`,
      { type: 'integer', minimum: 0 },
    ]),
  ),
  'SearchResult.nominations': { type: 'integer', minimum: 1 },
  'SearchResult.wins': { type: 'integer', minimum: 0 },
  'DatasetEntry.bytes': { type: 'integer', minimum: 0 },
  'DatasetEntry.sha256': { pattern: '^[0-9a-f]{64}$' },
  'DatasetEntry.revision': { pattern: '^[0-9a-f]{64}$' },
  'DatasetList.revision': { pattern: '^[0-9a-f]{64}$' },
  ...Object.fromEntries(
    [
      'SearchResult.firstYear',
      'SearchResult.lastYear',
      'AwardName.firstYear',
      'AwardName.lastYear',
      'CategoryName.firstYear',
      'CategoryName.lastYear',
    ].map((f) => [f, { pattern: YEAR_KEY }]),
  ),
  'SearchResult.id': { pattern: '^(?:tt|nm|co)[0-9]+$' },
  'SearchResult.filmYear': { pattern: '^[0-9]{4}(?:/[0-9]{2})?$' },
  'Ranking.per': { enum: ['ceremony'] },
  'Ranking.limit': { type: 'integer', minimum: 1, maximum: RANKING.maxLimit },
  'Ranking.total': { type: 'integer', minimum: 0 },
  'Ranking.entries': { maxItems: RANKING.maxLimit },
  'RankingEntry.rank': { type: 'integer', minimum: 1 },
  'RankingEntry.id': { pattern: '^(?:tt|nm|co)[0-9]+$' },
  'RankingEntry.ceremony': { type: 'integer', minimum: 1 },
  ...Object.fromEntries(['Ranking.from', 'Ranking.to', 'RankingEntry.year'].map((f) => [f, { pattern: '^[0-9]+$' }])),
  ...Object.fromEntries(
    ['RankingEntry.nominations', 'RankingEntry.wins'].map((f) => [f, { type: 'integer', minimum: 0 }]),
  ),
};

/**
 * A ranking's segments (`name=value`, any of them, in any order, each once):
 * OpenAPI has no optional path segment, so the operation's path is the one
 * with none, and these are described in it and listed, with their schemas,
 * as `x-segments`.
 */
const RANKING_SEGMENTS: { name: string; description: string; schema: Schema }[] = [
  {
    name: 'of',
    description: 'What is ranked; default `people`.',
    schema: { type: 'string', enum: RANKING.of, default: 'people' },
  },
  {
    name: 'by',
    description: 'The count ranked by; default `nominations`.',
    schema: { type: 'string', enum: [...RANKING.by], default: 'nominations' },
  },
  {
    name: 'class',
    description:
      'Only nominations in this class, as the source names it, or `competitive` (every class but SciTech and Special). Not with `award`.',
    schema: { type: 'string', enum: ['competitive', ...RANKING.classes] },
  },
  {
    name: 'award',
    description:
      'Only nominations for this award, by its id from `/awards`; one the archive does not have answers 404. Not with `class`.',
    schema: { type: 'string', pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*$' },
  },
  {
    name: 'from',
    description: "First held year counted; default the archive's first.",
    schema: { type: 'integer', minimum: 0 },
  },
  {
    name: 'to',
    description: "Last held year counted, not before `from`; default the archive's last.",
    schema: { type: 'integer', minimum: 0 },
  },
  {
    name: 'won',
    description: '`yes`: only those with a win in the span and scope; `no`: only those without one.',
    schema: { type: 'string', enum: [...RANKING.won] },
  },
  {
    name: 'per',
    description:
      '`ceremony`: each entry is one film, person or company at one ceremony (the most wins at one ceremony).',
    schema: { type: 'string', enum: ['ceremony'] },
  },
  {
    name: 'limit',
    description: `Entries at most; default ${RANKING.limit}.`,
    schema: { type: 'integer', minimum: 1, maximum: RANKING.maxLimit, default: RANKING.limit },
  },
];

/** The component schemas: those derived from types.ts (`derived`, default the checked-in file) with the refinements above. */
export function componentSchemas(
  derived: Record<ComponentName, Schema> = JSON.parse(readFileSync(SCHEMAS_FILE, 'utf8')),
): Record<ComponentName, Schema> {
  const schemas = structuredClone(derived);
  for (const [target, refinement] of Object.entries(REFINEMENTS)) {
    const [component, field] = target.split('.') as [ComponentName, string];
    const property = (schemas[component]?.properties as Record<string, Schema> | undefined)?.[field];
    if (!property) throw new Error(`openapi: refinement for ${target}, which the types no longer have`);
    Object.assign(property, refinement);
  }
  // The archive and a ceremony answer are keyed by held year.
  schemas.Archive.propertyNames = { pattern: YEAR_KEY };
  return schemas;
}

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  206: 'Partial Content',
  304: 'Not Modified',
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  429: 'Too Many Requests',
  416: 'Range Not Satisfiable',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** An Error body whose message is one of `messages`. */
function errorSchema(messages: string[]): Schema {
  const alternatives: Schema[] = messages.map((m) => ({ const: m }));
  return {
    ...ref('Error'),
    properties: { error: alternatives.length === 1 ? alternatives[0] : { anyOf: alternatives } },
  };
}

function errorResponse(description: string, messages: string[], example: string, extra: Schema = {}): Schema {
  return {
    description,
    ...extra,
    content: {
      'application/json': { schema: errorSchema(messages), examples: { error: { value: { error: example } } } },
    },
  };
}

const PARAM_SHAPES: Record<Param | 'apikey', string> = {
  name: 'name=<value>',
  year: 'year=<value>',
  id: 'id=<value>',
  file: 'file=<value>',
  apikey: 'apikey=<key>',
};

/** The id routes: what their id names, and the 400 a malformed one gets. */
const ID_PARAMS: Partial<
  Record<Route['id'], { form: (typeof ID_FORMS)[keyof typeof ID_FORMS]; what: string; error: string }>
> = {
  titleById: { form: ID_FORMS.titleById, what: 'The IMDb id of a film', error: MESSAGES.badTitleId },
  nameById: {
    form: ID_FORMS.nameById,
    what: 'The IMDb id of a person (`nm…`) or a company (`co…`)',
    error: MESSAGES.badNameId,
  },
  filmRecord: { form: ID_FORMS.titleById, what: 'The IMDb id of a film', error: MESSAGES.badTitleId },
  peopleRecord: {
    form: ID_FORMS.nameById,
    what: 'The IMDb id of a person (`nm…`) or a company (`co…`)',
    error: MESSAGES.badNameId,
  },
  awardRecord: {
    form: ID_FORMS.awardRecord,
    what: 'An award’s id, as the award list (`/awards`) gives it',
    error: MESSAGES.badAwardId,
  },
};

function idParameter(route: Route, literally: string): Schema {
  const id = ID_PARAMS[route.id]!;
  return {
    name: 'id',
    in: 'path',
    required: true,
    description:
      route.id === 'awardRecord'
        ? `${id.what}: ${id.form.expected}. ${literally} A malformed id answers 400; a well-formed one that names no award answers 404.`
        : `${id.what}, as IMDb writes it: ${id.form.expected}. ${literally} A malformed id answers 400; a well-formed one that no nomination carries answers 404. ` +
          "The archive holds the ids its source records for each nomination; a film or person the source has no id for is not found by id (its nominations are in its ceremony's and its award's records).",
    schema: { type: 'string', pattern: id.form.pattern },
    examples: { example: { value: route.example.id } },
  };
}

function parameter(p: Param | 'apikey', route: Route, yearRange: [number, number]): Schema {
  const literally =
    `In the path this is the whole segment \`${PARAM_SHAPES[p]}\`: the literal text \`${p}=\` followed by the value ` +
    'URL-encoded with encodeURIComponent (a `/` in the value must be sent as `%2F`).';
  if (p === 'apikey') {
    return {
      name: 'apikey',
      in: 'path',
      required: true,
      description:
        `Your API key (it starts with \`${KEY_PREFIX}\`; get one at /portal). ${literally} A missing, unknown or revoked key answers 403. ` +
        'A rotated key may have a grace period (now, 1 h, 24 h or 7 days, chosen at the portal): it answers like the new key until then, and 403 from its end.',
      schema: { type: 'string' },
      examples: { placeholder: { value: 'YOUR_KEY' } },
    };
  }
  if (p === 'id') return idParameter(route, literally);
  if (p === 'file') {
    return {
      name: 'file',
      in: 'path',
      required: true,
      description: `A file's name as the dataset list (\`/dataset\`) gives it, such as \`oscars.sqlite\`. ${literally} A name no file can have answers 400; one the list does not name, 404.`,
      schema: { type: 'string', pattern: DATASET_FILE_NAME.source },
      examples: { example: { value: route.example.file } },
    };
  }
  if (p === 'year') {
    return {
      name: 'year',
      in: 'path',
      required: true,
      description:
        `The year the ceremony was held (not the film year), from ${yearRange[0]} to ${yearRange[1]}; both 1930 ceremonies are "1930". ` +
        `${literally} A value that is not a whole number (digits only) answers 400; a year without a ceremony, or outside the archive, answers 404.`,
      schema: { type: 'integer', minimum: yearRange[0], maximum: yearRange[1] },
      examples: { example: { value: Number(route.example.year) } },
    };
  }
  if (route.id === 'search') {
    return {
      name: 'name',
      in: 'path',
      required: true,
      description:
        `Text to search for: a film, person, company or category, in any case, with or without marks (\`sirat\` finds Sirāt), punctuation or spacing, the start of its words (\`emma st\`), ` +
        `with a typo or two anywhere (\`spielburg\`), its words in any order (\`kurosawa akira\`), joined or split (\`peter otoole\`, \`casa blanca\`), \`&\` for "and", a number as digits, words or roman numerals (\`rocky 3\`), ` +
        `without its leading article, with a film's year (\`titanic 1997\`), or an award as people name it (\`best actress\`). ` +
        `${literally} Example: \`name=${encodeURIComponent(route.example.name ?? '')}\`. 1 to ${MAX_SEARCH_LENGTH} characters once decoded.`,
      schema: { type: 'string', minLength: 1, maxLength: MAX_SEARCH_LENGTH },
      examples: { example: { value: route.example.name } },
    };
  }
  const what =
    route.id === 'personByName'
      ? 'The exact, case-sensitive name of a person, company or film as the Academy lists it'
      : route.id === 'filmByNameAndYear'
        ? 'The exact, case-sensitive title of a film (or name of a person) as the Academy lists it'
        : 'Text the category name must contain, case-sensitive (`Actor` matches `Actor in a Leading Role` and `Actor in a Supporting Role`)';
  return {
    name: 'name',
    in: 'path',
    required: true,
    description: `${what}. ${literally} Example: \`name=${encodeURIComponent(route.example.name ?? '')}\`. 1 to ${MAX_NAME_LENGTH} characters once decoded.`,
    schema: { type: 'string', minLength: 1 },
    examples: { example: { value: route.example.name } },
  };
}

/** `/health`: outside the spec's lookups, without a key, for monitors. */
function healthOperation(): Schema {
  return {
    operationId: 'health',
    tags: ['service'],
    summary: 'Whether this instance can read the archive, with its revision and counts; no key.',
    description:
      'For load balancers and uptime monitors: asks for no key, answers no archive data and is never cached. ' +
      'The counts and the revision are what the build recorded. HEAD answers the same without a body.',
    responses: {
      200: {
        description: `${STATUS_TEXT[200]}: the archive can be read.`,
        content: { 'application/json': { schema: ref('Health') } },
      },
      405: errorResponse(
        `${STATUS_TEXT[405]}: answered to any method other than ${ALLOWED_METHODS}.`,
        [MESSAGES.methodNotAllowed],
        MESSAGES.methodNotAllowed,
      ),
      503: errorResponse(
        `${STATUS_TEXT[503]}: the archive's data or the key store cannot be read here; every lookup would answer 500, or 503 for a key not checked before when the key store cannot be reached.`,
        [MESSAGES.unavailable, MESSAGES.keysUnavailable],
        MESSAGES.unavailable,
      ),
    },
  };
}

/** Operations grouped as the spec's section 1 lists the lookups (each route names its tag). */
const TAGS: { name: Tag | 'service'; description: string }[] = [
  { name: 'ceremonies', description: 'The whole archive, or one ceremony by the year it was held.' },
  {
    name: 'people and films',
    description: 'Every nomination naming a person, company or film: across all ceremonies, or a film at one ceremony.',
  },
  {
    name: 'categories',
    description:
      'Every category whose full name contains a text, across all ceremonies or at one ceremony; and the list of every full category name.',
  },
  {
    name: 'search',
    description:
      'Films, people, companies and categories close to a text, however it is typed, best first, each with the lookup that answers it.',
  },
  { name: 'service', description: 'The service itself, without a key.' },
  {
    name: 'IMDb ids',
    description: 'Every nomination of a film, person or company, by the IMDb id the archive records for it.',
  },
  {
    name: 'records',
    description:
      'Everything the archive knows of a film, a person or company (by IMDb id), a ceremony (by held year) or an award (across all its names), with every id, totals and ranks.',
  },
  {
    name: 'dataset',
    description:
      'The whole source to keep, with every field the lookups leave out (IMDb ids, film years, characters and songs, canonical awards): SQLite, NDJSON and CSV.',
  },
];

/** A dataset file's 200 and 206 bodies: the file's bytes, by its format. */
const DATASET_CONTENT = {
  'application/vnd.sqlite3': { schema: { type: 'string', contentMediaType: 'application/vnd.sqlite3' } },
  'application/x-ndjson': { schema: { type: 'string', contentMediaType: 'application/x-ndjson' } },
  'text/csv': { schema: { type: 'string', contentMediaType: 'text/csv' } },
};

/**
 * The 200 schema of an operation, from the shape its route answers (`X[]`:
 * an array of X, never empty but for a search that found nothing).
 */
function okSchema(route: Route): Schema {
  const component = route.answer.replace(/\[\]$/, '') as ComponentName;
  const list = route.id === 'search' ? { maxItems: SEARCH_LIMIT } : { minItems: 1 };
  return route.answer.endsWith('[]') ? { type: 'array', items: ref(component), ...list } : ref(component);
}

function operation(route: Route, yearRange: [number, number]): Schema {
  const responses: Record<string, Schema> = {
    200: {
      description: `${STATUS_TEXT[200]}. Stored answers carry an ETag; send it back in If-None-Match to get a 304.`,
      headers: {
        ETag: { $ref: '#/components/headers/ETag' },
        'Cache-Control': { $ref: '#/components/headers/Cache-Control' },
      },
      content: route.answer === 'file' ? DATASET_CONTENT : { 'application/json': { schema: okSchema(route) } },
    },
    304: {
      description: `${STATUS_TEXT[304]}: the If-None-Match sent names the current answer; reuse your copy. No body.`,
      headers: { ETag: { $ref: '#/components/headers/ETag' } },
    },
  };
  if (route.answer === 'file') {
    responses[206] = {
      description: `${STATUS_TEXT[206]}: the bytes a \`Range: bytes=start-end\` asked for (one range; with \`If-Range\`, only while it names this file's ETag), of the file as stored, uncompressed, to resume a download.`,
      headers: {
        ETag: { $ref: '#/components/headers/ETag' },
        'Content-Range': { description: '`bytes start-end/size`.', schema: { type: 'string' } },
      },
      content: DATASET_CONTENT,
    };
    responses[416] = {
      description: `${STATUS_TEXT[416]}: the range starts past the end of the file. No body.`,
      headers: { 'Content-Range': { description: "`bytes */size`: the file's size.", schema: { type: 'string' } } },
    };
  }
  if (route.options) {
    const messages = [MESSAGES.badEncoding, ...Object.values(RANKING_ERRORS)];
    responses[400] = errorResponse(
      `${STATUS_TEXT[400]}: a segment is malformed, unknown or given twice; the message names it.`,
      messages,
      RANKING_ERRORS.class,
    );
  } else if (route.params.length > 0) {
    const messages: string[] = [
      MESSAGES.badEncoding,
      ...(route.params.includes('name') ? [route.id === 'search' ? MESSAGES.badSearch : MESSAGES.badName] : []),
    ];
    const year = route.params.includes('year');
    if (year) messages.push(MESSAGES.badYear);
    const id = ID_PARAMS[route.id];
    if (id) messages.push(id.error);
    if (route.params.includes('file')) messages.push(MESSAGES.badFileName);
    const what = id
      ? `an id not of the form ${id.form.expected}`
      : route.params.includes('file')
        ? 'a file name no dataset file can have'
        : `an empty or too long name${year ? ', a year that is not a whole number' : ''}`;
    responses[400] = errorResponse(
      `${STATUS_TEXT[400]}: a parameter is malformed (bad percent-encoding, ${what}).`,
      messages,
      messages[messages.length - 1],
    );
  }
  responses[403] = errorResponse(
    `${STATUS_TEXT[403]}: the key is missing, unknown or revoked.`,
    [MESSAGES.forbidden],
    MESSAGES.forbidden,
  );
  if (route.notFound)
    responses[404] = errorResponse(`${STATUS_TEXT[404]}: nothing matches.`, [route.notFound], route.notFound);
  responses[405] = errorResponse(
    `${STATUS_TEXT[405]}: answered to any method other than ${ALLOWED_METHODS} on this path.`,
    [MESSAGES.methodNotAllowed],
    MESSAGES.methodNotAllowed,
    {
      headers: {
        Allow: { description: 'The methods this path accepts.', schema: { type: 'string', const: ALLOWED_METHODS } },
      },
    },
  );
  responses[429] = {
    description: `${STATUS_TEXT[429]}: this key used up its requests for the current minute. Wait Retry-After seconds.`,
    headers: { 'Retry-After': { $ref: '#/components/headers/Retry-After' } },
    content: {
      'application/json': {
        schema: { ...ref('RateLimitError'), properties: { error: { const: MESSAGES.tooMany } } },
        examples: { limited: { value: { error: MESSAGES.tooMany, limit: '60 requests per minute', retryAfter: 42 } } },
      },
    },
  };
  responses[500] = errorResponse(
    `${STATUS_TEXT[500]}: the stored answer could not be read. Back off exponentially before trying again.`,
    [MESSAGES.fetchError],
    MESSAGES.fetchError,
  );
  responses[503] = errorResponse(
    `${STATUS_TEXT[503]}: the key could not be checked, because this server cannot reach its key store now (a self-hosted server whose PostgreSQL database is down); nothing was decided about the key. Try again after Retry-After.`,
    [MESSAGES.keysUnavailable],
    MESSAGES.keysUnavailable,
    { headers: { 'Retry-After': { $ref: '#/components/headers/Retry-After' } } },
  );

  const alias = route.roots.slice(1).map((r) => `\`${template(route, r)}\``);
  const segments = route.options
    ? ' Segments `name=value` may come between the root and the key, in any order, each once (OpenAPI has no optional path segment: they are listed in `x-segments` with their schemas): ' +
      RANKING_SEGMENTS.map((o) => `\`${o.name}\` (${o.description})`).join('; ') +
      '. Example: `/rankings/of=people/by=wins/class=Acting/from=2000/apikey=YOUR_KEY`. Over all years, a rank is the one the record of the thing gives.'
    : '';
  return {
    operationId: route.id,
    tags: [route.tag],
    summary: route.summary,
    description:
      `${route.summary} HEAD answers the same without a body.` +
      (alias.length ? ` Also answered at ${alias.join(', ')} (same operation, same answers).` : '') +
      segments,
    parameters: [...route.params, 'apikey' as const].map((p) => parameter(p, route, yearRange)),
    responses,
    ...(route.options ? { 'x-segments': RANKING_SEGMENTS.map((o) => ({ ...o, in: 'path', required: false })) } : {}),
  };
}

export function openApiDocument(options: OpenApiOptions): Schema {
  const { yearRange } = options;
  const baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/(.)\/+$/, '$1');
  const paths: Record<string, Schema> = {};
  for (const route of ROUTES) paths[template(route)] = { get: operation(route, yearRange) };
  paths[HEALTH_PATH] = { get: healthOperation() };

  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: 'Film Awards Archive API',
      version: API_VERSION,
      summary: `Every Academy Awards nomination and winner, ${yearRange[0]} to ${yearRange[1]}, keyed by the year each ceremony was held.`,
      description: [
        `Read-only JSON answers about the Academy Awards, ceremonies held ${yearRange[0]} to ${yearRange[1]}. A human-readable reference is at \`/\`.`,
        ...revisionSentence(options.source),
        '',
        '## Authentication: the key is a path segment',
        'Every lookup ends with the path segment `apikey=<your key>` (get a key at `/portal`). OpenAPI security schemes can put an',
        'API key only in a header, a query parameter or a cookie, none of which this service reads, so no security scheme is declared',
        'and `security` is empty: declaring a scheme would make generated clients send the key where it is ignored (and answered',
        'with 403). The key is instead the required `apikey` path parameter of every operation; without a valid one every',
        'operation answers 403.',
        '',
        '## Path segments',
        'Parameters are whole path segments of the form `name=<value>`, `year=<value>` and `apikey=<key>`, each value',
        'URL-encoded with encodeURIComponent: `/person/name=Emma%20Stone/apikey=YOUR_KEY`.',
        '',
        '## Limits and caching',
        'Each key may make 60 requests per minute; over that the answer is 429 with `Retry-After` (seconds). The limit is',
        'approximate: each instance counts the requests that reach it, and an answer served from the CDN cache is not counted.',
        'Answers change once a',
        'year: cache them (they carry `Cache-Control` and an `ETag`; send `If-None-Match` to get a 304), do not poll, prefer the',
        'narrowest lookup that answers your question, and back off exponentially on 500.',
        '',
        '## Key rotation',
        'Rotating a key at `/portal` (or with the keys CLI) gives a new key; the old one stops at once or, when a grace period was',
        'chosen (1 hour, 24 hours or 7 days), goes on answering until its end, so an application can move to the new key without',
        'downtime; the owner can stop it sooner. Choose "now" for a key that leaked. An answer for a key in its grace period carries',
        '`Cache-Control: private, max-age=` no longer than the seconds the key has left.',
        '',
        `Methods: ${ALLOWED_METHODS}. Any other method answers 405 with the Error body.`,
        '',
        'Use is free; personal, research, teaching and hobby use is welcome. Commercial products are asked to make contact first.',
      ].join('\n'),
      license: { name: 'BSD-2-Clause', identifier: 'BSD-2-Clause' },
      contact: { name: 'Film Awards Archive API', ...(/^https?:\/\//.test(baseUrl) ? { url: `${baseUrl}/` } : {}) },
      ...(options.source ? { 'x-source': servedSource(options.source) } : {}),
    },
    servers: [{ url: baseUrl }],
    // The key is a path segment, which no OpenAPI security scheme
    // can describe (see info.description): no scheme applies.
    security: [],
    tags: TAGS,
    paths,
    components: {
      schemas: componentSchemas(),
      headers: {
        ETag: {
          description: 'Identifies this answer (and its encoding); send it back in If-None-Match.',
          schema: { type: 'string' },
        },
        'Cache-Control': {
          description: 'How long a client may keep the answer.',
          schema: { type: 'string', examples: [DATA_CACHE_CONTROL] },
        },
        'Retry-After': {
          description: 'Whole seconds until this key may ask again.',
          required: true,
          schema: { type: 'integer', minimum: 0 },
        },
      },
    },
    'x-api-key': { in: 'path', name: 'apikey', segment: 'apikey=<key>', portal: '/portal' },
  };
}

/** `openapi.json` for dist/: servers from PUBLIC_BASE_URL, years from the manifest. */
export function openApiJson(
  manifest: Pick<Manifest, 'yearRange'> & Partial<Pick<Manifest, 'source'>>,
  env: Record<string, string | undefined> = process.env,
): string {
  const options = {
    yearRange: manifest.yearRange,
    baseUrl: env.PUBLIC_BASE_URL || DEFAULT_BASE_URL,
    source: manifest.source,
  };
  return `${JSON.stringify(openApiDocument(options), null, 2)}\n`;
}
