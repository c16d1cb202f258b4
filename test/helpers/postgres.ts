/** The tests' throwaway PostgreSQL cluster: lib/pg-cluster.ts (the key benchmark starts one too). */
export { type PgCluster, postgresBin, startPostgres } from '../../lib/pg-cluster.ts';
