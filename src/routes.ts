/**
 * The API's routes: one table shared by the router, the service description
 * at `/` and the OpenAPI generator.
 */

export type Param = 'name' | 'year';
export type RouteId = 'allCeremonies' | 'ceremonyByYear' | 'personByName' | 'filmByNameAndYear' | 'categoryByName' | 'categoryByNameAndYear';

export interface Route {
  /** OpenAPI operation id. */
  id: RouteId;
  /** First path segment(s) accepted. */
  roots: string[];
  /** Parameter segments between the root and `apikey=`, in order. */
  params: Param[];
  /** One-line summary. */
  summary: string;
  /** Body of the 404 when nothing matches. */
  notFound: string;
  /** Example parameters for documentation. */
  example: Partial<Record<Param, string>>;
}

export const ROUTES: Route[] = [
  { id: 'allCeremonies', roots: ['archive', 'oscars'], params: [], summary: 'The whole archive: every ceremony year and its categories.', notFound: 'Data not found for the specified year', example: {} },
  { id: 'ceremonyByYear', roots: ['archive', 'oscars'], params: ['year'], summary: 'One ceremony year (the year it was held).', notFound: 'Data not found for the specified year', example: { year: '1930' } },
  { id: 'personByName', roots: ['person'], params: ['name'], summary: 'Every nomination naming this person, company or film, across all ceremonies.', notFound: 'Person not found', example: { name: 'Emma Stone' } },
  { id: 'filmByNameAndYear', roots: ['movie'], params: ['name', 'year'], summary: 'Every nomination naming this film (or person) at one ceremony.', notFound: 'Movie not found', example: { name: 'Sinners', year: '2026' } },
  { id: 'categoryByName', roots: ['award'], params: ['name'], summary: 'Every category whose name contains this text (case-sensitive), across all ceremonies.', notFound: 'Award not found', example: { name: 'Actor' } },
  { id: 'categoryByNameAndYear', roots: ['award'], params: ['name', 'year'], summary: 'Every category whose name contains this text (case-sensitive), at one ceremony.', notFound: 'Award not found', example: { name: 'Best Picture', year: '2026' } },
];

/** The path template of a route, as documented: `/person/name={name}/apikey={apikey}`. */
export function template(route: Route, root = route.roots[0]): string {
  return `/${[root, ...route.params.map((p) => `${p}={${p}}`), 'apikey={apikey}'].join('/')}`;
}

/** A concrete example path with a given key. */
export function examplePath(route: Route, key: string): string {
  const params = route.params.map((p) => `${p}=${encodeURIComponent(route.example[p] ?? '')}`);
  return `/${[route.roots[0], ...params, `apikey=${key}`].join('/')}`;
}

/** Longest name accepted, in characters. */
export const MAX_NAME_LENGTH = 512;
