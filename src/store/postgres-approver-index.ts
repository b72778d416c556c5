// The PostgreSQL store's approver index (approver-index.ts says what it is for and how it is read):
// the table, its fill, and the trigger that keeps it equal to `requests`.
import { type Dialect, OPEN } from "./approver-index.js";
import { NO_DEADLINE } from "./paging.js";

/** How the PostgreSQL store's reads of the index are written; `s` is the quoted schema. */
export function postgresApproverDialect(s: string): Dialect {
  return {
    param: (values, v) => {
      values.push(v);
      return `$${values.length}`;
    },
    contains: (column, q) => `strpos(${column}, ${q}) > 0`,
    requests: `${s}.requests`,
    index: `${s}.request_approvers`,
    join: "JOIN",
  };
}

/** A row's names in the index: its approvers, or OPEN when it has none. */
const keys = (row: string) =>
  `(CASE WHEN cardinality(${row}.approvers) = 0 THEN ARRAY['${OPEN}']::text[] ELSE ${row}.approvers END)`;
/** A row's deadline key, as the store's listings write it (postgres-sql.ts). */
const DKEY = (row: string) =>
  `COALESCE(${row}.deadline, ${NO_DEADLINE.toExponential().replace("+", "")}::double precision)`;

/** Fills the index from every request (the bench's bulk load calls it too). */
export function postgresFillApprovers(s: string): string {
  return `
    INSERT INTO ${s}.request_approvers (approver, status, id, dkey, title_lower)
      SELECT DISTINCT k, r.status, r.id, ${DKEY("r")}, COALESCE(r.title_lower, '')
      FROM ${s}.requests AS r, unnest(${keys("r")}) AS k;`;
}

/** The index's key, built after a fill (one sort instead of millions of inserts). */
export function postgresApproversKey(s: string): string {
  return `ALTER TABLE ${s}.request_approvers
    ADD PRIMARY KEY (approver, status, id) INCLUDE (dkey, title_lower);`;
}

/** Migration 9: the table (its key built after the fill), and the triggers. The update
 * trigger fires only when a column the index holds changed. */
export function postgresApproverIndexSql(s: string): string {
  return `
    CREATE TABLE ${s}.request_approvers (
      approver text COLLATE "C" NOT NULL,
      status text NOT NULL,
      id text COLLATE "C" NOT NULL,
      dkey double precision NOT NULL,
      title_lower text COLLATE "C" NOT NULL
    );
    ${postgresFillApprovers(s)}
    ${postgresApproversKey(s)}
    CREATE FUNCTION ${s}.request_approvers_sync() RETURNS trigger LANGUAGE plpgsql AS $body$
      BEGIN
        IF TG_OP <> 'INSERT' THEN
          DELETE FROM ${s}.request_approvers
            WHERE approver = ANY (${keys("OLD")}) AND status = OLD.status AND id = OLD.id;
        END IF;
        IF TG_OP <> 'DELETE' THEN
          INSERT INTO ${s}.request_approvers (approver, status, id, dkey, title_lower)
            SELECT DISTINCT k, NEW.status, NEW.id, ${DKEY("NEW")}, COALESCE(NEW.title_lower, '')
            FROM unnest(${keys("NEW")}) AS k
            ON CONFLICT DO NOTHING;
        END IF;
        RETURN NULL;
      END
      $body$;
    CREATE TRIGGER request_approvers_insert_delete AFTER INSERT OR DELETE ON ${s}.requests
      FOR EACH ROW EXECUTE FUNCTION ${s}.request_approvers_sync();
    CREATE TRIGGER request_approvers_update
      AFTER UPDATE OF approvers, status, deadline, title_lower ON ${s}.requests FOR EACH ROW
      WHEN (OLD.approvers IS DISTINCT FROM NEW.approvers OR OLD.status IS DISTINCT FROM NEW.status
        OR OLD.deadline IS DISTINCT FROM NEW.deadline OR OLD.title_lower IS DISTINCT FROM NEW.title_lower)
      EXECUTE FUNCTION ${s}.request_approvers_sync();`;
}
