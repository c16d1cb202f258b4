/**
 * The reference page's example answers, taken from the build's own output
 * rather than written by hand: each route's example request (its `example`
 * parameters in src/shared/routes.ts) is answered by the runtime's pipeline over the
 * files just built, so the page shows what the API will answer (a 404 too,
 * when the archive built lacks the example). Long answers are abridged for
 * reading: arrays keep their first items and say how many more there are,
 * objects with many keys their first and last, long strings are cut.
 */
import { createApi } from '../../src/api/handler.ts';
import { healthBody } from '../../src/api/health.ts';
import { examplePath, type RouteId, ROUTES } from '../../src/shared/routes.ts';
import type { Manifest } from '../../src/shared/types.ts';

/** One example: the status and the body as the API sent it (compact JSON). */
export interface ExampleAnswer {
  status: number;
  body: string;
}

export type ExampleAnswers = Partial<Record<RouteId | 'health', ExampleAnswer>>;

/** Answers every route's example over the built files (`files`: path under dist/ to bytes). */
export async function exampleAnswers(
  files: ReadonlyMap<string, Uint8Array>,
  manifest: Manifest,
): Promise<ExampleAnswers> {
  const api = createApi({
    data: { read: (p) => files.get(p) ?? null },
    keys: { verify: () => true },
    rateLimitPerMinute: 1_000,
  });
  const answers: ExampleAnswers = { health: { status: 200, body: JSON.stringify(healthBody(manifest)) } };
  // A dataset file is a download (megabytes, binary), not an answer to show.
  for (const route of ROUTES.filter((r) => r.answer !== 'file')) {
    const reply = await api.reply({ method: 'GET', url: examplePath(route, 'example'), header: () => null });
    answers[route.id] = { status: reply.status, body: new TextDecoder().decode(reply.body ?? new Uint8Array()) };
  }
  return answers;
}

export interface AbridgeLimits {
  /** Items kept of an array of objects at the top of the answer; deeper ones keep one. */
  items: number;
  /** Items kept of an array of strings (names). */
  names: number;
  /** Keys kept of an object with more than this many (the first ones, and the last). */
  keys: number;
  /** Characters kept of a string. */
  chars: number;
  /** Widest line: a value whose compact JSON fits is written on one line, as the API sends it. */
  width: number;
}

const LIMITS: AbridgeLimits = { items: 2, names: 4, keys: 3, chars: 90, width: 76 };
/** Marks what was cut, for the writer below: no answer holds a NUL. */
const MORE = '\u0000more:';
const more = (n: number) => `${MORE}… ${n} more`;

/** The value with long arrays, objects and strings cut; what was cut is marked for {@link abridgedJson}. */
function cut(value: unknown, limits: AbridgeLimits, depth = 0): unknown {
  if (typeof value === 'string') return value.length > limits.chars ? `${value.slice(0, limits.chars)}…` : value;
  if (Array.isArray(value)) {
    const limit = value.every((v) => typeof v === 'string') ? limits.names : depth === 0 ? limits.items : 1;
    const keep = value.length > limit + 1 ? limit : value.length; // never "… 1 more": it takes the line the item would
    const kept = value.slice(0, keep).map((v) => cut(v, limits, depth + 1));
    return value.length > keep ? [...kept, more(value.length - keep)] : kept;
  }
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).map(([k, v]): [string, unknown] => [k, cut(v, limits, depth + 1)]);
    if (entries.length <= limits.keys) return Object.fromEntries(entries);
    return Object.fromEntries([
      ...entries.slice(0, limits.keys - 1),
      [more(entries.length - limits.keys), null],
      entries[entries.length - 1],
    ]);
  }
  return value;
}

const isMark = (v: unknown): v is string => typeof v === 'string' && v.startsWith(MORE);
/** A mark as JSON.stringify writes it (NUL escaped). */
const MARK_IN_JSON = JSON.stringify(MORE).slice(1, -1);

/**
 * Indented JSON, but each value that fits the width on one line is written compactly there; marks become `… N more`.
 */
function write(value: unknown, indent: string, width: number): string {
  const compact = JSON.stringify(value);
  if (isMark(value)) return value.slice(MORE.length);
  if (!compact.includes(MARK_IN_JSON) && indent.length + compact.length <= width) return compact;
  const inner = `${indent}  `;
  if (Array.isArray(value)) return `[\n${value.map((v) => inner + write(v, inner, width)).join(',\n')}\n${indent}]`;
  if (value && typeof value === 'object') {
    const lines = Object.entries(value).map(
      ([k, v]) => inner + (isMark(k) ? k.slice(MORE.length) : `${JSON.stringify(k)}: ${write(v, inner, width)}`),
    );
    return `{\n${lines.join(',\n')}\n${indent}}`;
  }
  return compact;
}

/**
 * JSON text of `body` for reading: indented where it does not fit a line,
 * abridged where long, `… N more` standing for what was left out (so the text
 * is no longer JSON where it says so).
 */
export function abridgedJson(body: string, limits: AbridgeLimits = LIMITS): { text: string; abridged: boolean } {
  const value = JSON.parse(body);
  const shown = cut(value, limits);
  return { text: write(shown, '', limits.width), abridged: JSON.stringify(shown) !== JSON.stringify(value) };
}
