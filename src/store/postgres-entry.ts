// `airlock/postgres`: the store for several processes or machines sharing one PostgreSQL.
export { type PostgresStore, type PostgresStoreOptions, postgresStore } from "./postgres.js";
