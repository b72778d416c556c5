// Reads of one request by id, grouped: a lookup goes at once while few are on their way; the ones
// asked for while more are go together as one statement (`id = ANY(...)`) when one returns, which
// with many gates in flight saves a round trip, a statement and a socket write per lookup. A lookup
// is always sent after it was asked for, so it sees every write committed before the call, as a
// lookup of its own would.
import type { PoolClient } from "pg";
import type { Query } from "./postgres-sql.js";
import type { DocRow } from "./rows.js";

export interface ReadBatcherOptions {
  /** One id ($1). */
  byId: Query;
  /** Many ids ($1 text[]), each row with its id. */
  byIds: Query;
  run<T>(what: string, fn: (c: PoolClient) => Promise<T>): Promise<T>;
  /** Most ids in one statement. */
  maxBatch: number;
  /** Statements on their way before lookups wait to be grouped. */
  maxInFlight: number;
}

interface Waiting {
  id: string;
  resolve(row: DocRow | undefined): void;
  reject(err: unknown): void;
}

export function createReadBatcher(o: ReadBatcherOptions) {
  let queue: Waiting[] = [];
  let inFlight = 0;

  async function fetch(batch: Waiting[]): Promise<void> {
    try {
      const rows = await o.run("getRequest", async (c) => {
        if (batch.length === 1) {
          const r = await c.query<DocRow>({ ...o.byId, values: [batch[0]?.id] });
          return r.rows.map((row) => ({ ...row, id: batch[0]?.id as string }));
        }
        const ids = [...new Set(batch.map((w) => w.id))];
        return (await c.query<DocRow & { id: string }>({ ...o.byIds, values: [ids] })).rows;
      });
      const found = new Map(rows.map((r) => [r.id, r]));
      for (const w of batch) w.resolve(found.get(w.id));
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }

  function pump() {
    while (queue.length > 0 && inFlight < o.maxInFlight) {
      const batch = queue.slice(0, o.maxBatch);
      queue = queue.slice(batch.length);
      inFlight++;
      void fetch(batch).finally(() => {
        inFlight--;
        pump();
      });
    }
  }

  return {
    get(id: string): Promise<DocRow | undefined> {
      return new Promise((resolve, reject) => {
        queue.push({ id, resolve, reject });
        pump();
      });
    },
  };
}
