// `airlock/sqlite`: the embedded default store.
export { type SqliteStoreOptions, sqliteStore } from "./sqlite.js";
