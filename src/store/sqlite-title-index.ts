// The title search index of the SQLite store (requests_title, FTS5 trigrams) takes new rows in
// batches, not one by one at each create. An FTS5 insert is costly alone: each transaction that
// writes one adds a segment to the index (pages of its own), and the segments are merged again
// later. So a create leaves its row out of the index; every TITLE_INDEX_BATCH creates, the rows past
// the mark are indexed in one statement and the mark moves on (indexTitles). A search asks the index
// and also checks the rows past the mark (UNINDEXED_ROWIDS), so it always sees every row.
//
// The invariant the triggers keep: a row is in the index exactly when its rowid is at or below
// title_index.upto. A new row that gets a rowid at or below the mark (SQLite reuses the largest
// rowid after that row is deleted) is indexed at once; updates and deletes touch the index only for
// rows at or below it (FTS5 must never be told to delete what it does not hold).
import type Database from "better-sqlite3";

/** Creates between two runs of indexTitles, per process. */
export const TITLE_INDEX_BATCH = 256;

const UPTO = "(SELECT upto FROM title_index WHERE id = 1)";

/** Migration 8: the mark, set past every row (all were indexed one by one until now), and the
 * triggers of migration 5 made to keep the invariant above. Re-runnable. */
export const SQLITE_TITLE_INDEX_SQL = `
  CREATE TABLE IF NOT EXISTS title_index (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    upto INTEGER NOT NULL
  );
  INSERT INTO title_index (id, upto) SELECT 1, COALESCE(MAX(rowid), 0) FROM requests WHERE true
    ON CONFLICT (id) DO UPDATE SET upto = excluded.upto;
  DROP TRIGGER IF EXISTS requests_title_insert;
  DROP TRIGGER IF EXISTS requests_title_delete;
  DROP TRIGGER IF EXISTS requests_title_update;
  CREATE TRIGGER requests_title_insert AFTER INSERT ON requests
    WHEN new.title_lower IS NOT NULL AND new.rowid <= ${UPTO} BEGIN
    INSERT INTO requests_title (rowid, title_lower) VALUES (new.rowid, new.title_lower);
  END;
  CREATE TRIGGER requests_title_delete AFTER DELETE ON requests
    WHEN old.title_lower IS NOT NULL AND old.rowid <= ${UPTO} BEGIN
    INSERT INTO requests_title (requests_title, rowid, title_lower)
      VALUES ('delete', old.rowid, old.title_lower);
  END;
  CREATE TRIGGER requests_title_update AFTER UPDATE OF title_lower ON requests
    WHEN old.title_lower IS NOT new.title_lower AND old.rowid <= ${UPTO} BEGIN
    INSERT INTO requests_title (requests_title, rowid, title_lower)
      SELECT 'delete', old.rowid, old.title_lower WHERE old.title_lower IS NOT NULL;
    INSERT INTO requests_title (rowid, title_lower)
      SELECT new.rowid, new.title_lower WHERE new.title_lower IS NOT NULL;
  END;
`;

/** The rows a search must check besides the index's candidates: those past the mark. */
export const UNINDEXED_ROWIDS = `SELECT rowid FROM requests WHERE rowid > ${UPTO}`;

/** Indexes the rows past the mark and moves the mark past the last row; returns how many rows it
 * indexed. Run inside a write transaction (the mark and the index move together). */
export function titleIndexer(db: Database.Database): () => number {
  const add = db.prepare(
    `INSERT INTO requests_title (rowid, title_lower)
     SELECT rowid, title_lower FROM requests WHERE rowid > ${UPTO} AND title_lower IS NOT NULL`,
  );
  // MAX: rows deleted at the end of the table never move the mark back.
  const mark = db.prepare(
    "UPDATE title_index SET upto = MAX(upto, (SELECT COALESCE(MAX(rowid), 0) FROM requests)) WHERE id = 1",
  );
  return () => {
    const n = add.run().changes;
    mark.run();
    return n;
  };
}

/** At open: rows a process left past the mark (it stopped before its next batch) are indexed now,
 * so the rows a search checks directly stay few however often processes restart. */
export function indexTitlesLeftBehind(db: Database.Database): void {
  const left = db.prepare(`SELECT EXISTS (${UNINDEXED_ROWIDS}) AS n`).get() as { n: number };
  if (left.n) db.transaction(titleIndexer(db)).immediate();
}

/** For a bulk load that rebuilt the whole index ('rebuild'): every row is in it now. */
export function markAllTitlesIndexed(db: Database.Database): void {
  db.prepare(
    "UPDATE title_index SET upto = (SELECT COALESCE(MAX(rowid), 0) FROM requests) WHERE id = 1",
  ).run();
}
