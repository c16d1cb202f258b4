/** Whether an If-None-Match header names the answer of id `id` (weak or strong, or `*`). */
export function etagMatches(header: string | null | undefined, id: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '').replaceAll('"', '') === id);
}
