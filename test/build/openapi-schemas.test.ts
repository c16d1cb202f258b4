/**
 * The component schemas are derived from src/shared/types.ts at development
 * time (npm run openapi:schemas, with TypeScript) and checked in as
 * build/site/openapi-schemas.json, which is all the build reads. A change to the
 * types without running the command fails here, naming it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { componentSchemas, openApiDocument, SCHEMAS_FILE } from '../../build/site/openapi.ts';
import { derivedSchemas, schemasJson } from '../../build/site/openapi-schemas.ts';

describe('the checked-in component schemas', () => {
  it('are what npm run openapi:schemas derives from src/shared/types.ts now', () => {
    const stale =
      'build/site/openapi-schemas.json is not what src/shared/types.ts gives: run npm run openapi:schemas and commit the file';
    expect(readFileSync(SCHEMAS_FILE, 'utf8'), stale).toBe(schemasJson());
  });

  it('are the document’s schemas, with the refinements a type cannot say', () => {
    const schemas = (openApiDocument({ yearRange: [1929, 2026] }) as { components: { schemas: unknown } }).components
      .schemas;
    expect(schemas).toEqual(componentSchemas(derivedSchemas()));
    expect(schemas).toMatchObject({
      PersonMatch: { properties: { year: { type: 'string', pattern: '^[0-9]{4}$' } } },
      Archive: { propertyNames: { pattern: '^[0-9]{4}$' } },
    });
  });

  it('refuse a refinement for a field the types no longer have', () => {
    const derived = derivedSchemas();
    const { year: _, ...rest } = (derived.PersonMatch as { properties: Record<string, unknown> }).properties;
    expect(() => componentSchemas({ ...derived, PersonMatch: { ...derived.PersonMatch, properties: rest } })).toThrow(
      /refinement for PersonMatch.year, which the types no longer have/,
    );
  });
});

describe('npm run openapi:schemas', () => {
  it('follows a field added to the types without another copy to edit', () => {
    const source = `
      /** One nomination. */
      export interface Nomination {
        primary: string[];
        secondary?: string[];
        won: boolean;
        /** Points. */
        score?: number;
      }
      export interface Category { category: string; nominations: Nomination[] }
      export type Ceremony = Category[];
      export type Archive = Record<string, Ceremony>;
      export interface PersonMatch { year: string; category: string; nomination: Nomination }
      export interface FilmMatch { category: string; nomination: Nomination }
      export interface CategoryMatch { year: string; category: string; nominations: Nomination[] }
      export interface CategoryYearMatch { category: string; nominations: Nomination[] }
      export interface ErrorBody { error: string }
      export interface RateLimitErrorBody extends ErrorBody { limit: string; retryAfter: number }
      export interface HealthBody { status: string; archive: ArchiveHealth }
      export interface ArchiveHealth { revision: string; sample: boolean; firstYear: number; lastYear: number; years: number; categories: number; nominations: number }
      export interface SearchResult { name: string; kind: 'person' | 'film'; nominations: number; wins: number; firstYear: string; lastYear: string; path: string }
      export interface AwardName { name: string; firstYear: string; lastYear: string }
      export interface CategoryName { name: string; award: string; firstYear: string; lastYear: string; path: string }
      export interface DatasetEntry { name: string; format: 'sqlite' | 'csv'; bytes: number; sha256: string; revision: string; licence: string }
      export interface DatasetList { revision: string; licence: string; attribution: string; files: DatasetEntry[] }
      export interface RecordFilm { id: string | null; title: string; filmYear: string }
      export interface RecordName { id: string | null; name: string }
      export interface RecordNomination { year: string; films: RecordFilm[]; people: RecordName[] }
      export interface Credit { name: string }
      export interface Standing { nominations: number }
      export interface ClassStanding extends Standing { class: string }
      export interface AwardStanding extends Standing { award: string }
      export interface Ranks { overall: Standing; classes: ClassStanding[]; awards: AwardStanding[] }
      export interface CeremonyRef { year: string; ceremony: number }
      export interface CeremonyHeld { ceremony: number; filmYear: string }
      export interface CeremonyCategory { category: string }
      export interface FilmRecord { id: string; ranks: Ranks; ceremonies: CeremonyRef[]; titles: Credit[]; entries: RecordNomination[] }
      export interface PeopleRecord { id: string; first: CeremonyRef; entries: RecordNomination[] }
      export interface CeremonyRecord { year: string; ceremonies: CeremonyHeld[]; categories: CeremonyCategory[]; entries: RecordNomination[] }
      export interface AwardSummary { id: string; names: AwardName[] }
      export interface AwardRecord extends AwardSummary { entries: RecordNomination[] }
      export interface RankingEntry { rank: number }
      export interface Ranking { of: string; entries: RankingEntry[] }`;
    const schemas = derivedSchemas(source);
    expect(schemas.Nomination.properties).toHaveProperty('score', { description: 'Points.', type: 'number' });
    // An id the source may not give: a string or null.
    expect(schemas.RecordFilm.properties).toHaveProperty('id', { type: ['string', 'null'] });
    expect(schemas.Nomination.required).toEqual(['primary', 'won']);
  });

  it('refuses a type it cannot express', () => {
    expect(() => derivedSchemas('export interface Nomination { primary: string | number }')).toThrow(
      /cannot express the type `string \| number` of Nomination.primary/,
    );
  });
});
