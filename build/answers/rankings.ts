/**
 * The rankings stored by the build (docs/rankings.md): those over all years,
 * whatever is ranked and by what, overall, among the competitive classes,
 * within each class and within each
 * award; few (three kinds, two counts, one scope a class or award), and the
 * most asked. Any other (a span of years, winners only or without a win,
 * another limit) is made at run time from the table they are made from
 * (stored as a file of its own, the manifest's `rankings`). Both through the one ranking maker (rankingText in
 * src/client/client.ts; rankingTexts here, which tallies each scope once for
 * both counts), so a stored ranking is byte for byte the one made at run
 * time. Pure: the table's text in, records out.
 */
import {
  type MadeRecords,
  parseRankingTable,
  RANKING,
  type RankingAsk,
  rankingKey,
  rankingTexts,
} from '../../src/client/client.ts';

export function rankingRecords(table: string): MadeRecords['records'] {
  const t = parseRankingTable(table);
  const scopes: Partial<RankingAsk>[] = [
    {},
    { class: 'competitive' },
    ...t.classes.map((c) => ({ class: c })),
    ...t.awards.map((a) => ({ award: a })),
  ];
  const asks = RANKING.of.flatMap((of) =>
    RANKING.by.flatMap((by) =>
      scopes.map((scope): RankingAsk => ({ of, by: by as RankingAsk['by'], limit: RANKING.limit, ...scope })),
    ),
  );
  const texts = rankingTexts(t, asks);
  return asks.map((ask, i) => ({
    key: `ranking ${rankingKey(ask)}`,
    text: texts[i]!,
    group: 'ranking' as const,
  }));
}
