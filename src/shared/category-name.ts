/** Words kept lower case unless they open the name. */
const SMALL_WORDS = new Set(['a', 'an', 'and', 'or', 'of', 'in', 'the', 'for', 'by', 'to', 'on']);

/**
 * The Academy writes category names in capitals outside the parentheses
 * (`ACTOR IN A LEADING ROLE`, `MUSIC (Original Song)`). Users search them
 * case-sensitively, so the part outside parentheses is title-cased and the
 * part inside is kept exactly as written.
 */
export function titleCaseCategory(raw: string): string {
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
