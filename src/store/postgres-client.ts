// Running statements on pooled connections, with the store's failure rules:
// - a lost or refused connection becomes `store_unavailable` naming the database;
// - an operation whose connection died before COMMIT was sent is retried once on a fresh connection
//   (PostgreSQL rolled back whatever the dead connection had open, so nothing is written twice);
// - after COMMIT was sent the outcome is unknown: we say so instead of guessing;
// - a connection that failed mid-transaction is rolled back or destroyed, never returned dirty.
import type { Pool, PoolClient, QueryResult, QueryResultRow } from "pg";
import { InvalidInputError } from "../core/errors.js";
import {
  errorMessage,
  isConnectionError,
  storageFault,
  storeUnavailable,
} from "./postgres-errors.js";
import type { Query } from "./postgres-sql.js";

export interface Step {
  /** Set just before COMMIT is sent: from then on a lost connection leaves the outcome unknown. */
  committing: boolean;
}

export interface Runner {
  run<T>(what: string, fn: (c: PoolClient, step: Step) => Promise<T>): Promise<T>;
}

export function createRunner(pool: Pool, target: string, isClosed: () => boolean): Runner {
  return {
    async run(what, fn) {
      for (let attempt = 1; ; attempt++) {
        let client: PoolClient;
        try {
          client = await pool.connect();
        } catch (err) {
          throw isConnectionError(err) ? storeUnavailable(target, what, err) : err;
        }
        // A checked-out client whose connection drops between statements emits "error"; the pool
        // only listens while the client is idle, and an unheard "error" would crash the process.
        let lost: Error | undefined;
        const onLost = (err: Error) => {
          lost = err;
        };
        client.on("error", onLost);
        const step: Step = { committing: false };
        try {
          const out = await fn(client, step);
          client.removeListener("error", onLost);
          client.release();
          return out;
        } catch (err) {
          const connectionFailed = lost !== undefined || isConnectionError(err);
          let destroy = connectionFailed;
          if (!connectionFailed) {
            // The statement failed, not the connection: end the transaction before reuse.
            // (Outside a transaction ROLLBACK only warns.)
            await client.query("ROLLBACK").catch(() => {
              destroy = true;
            });
          }
          client.removeListener("error", onLost);
          // release(error) destroys the connection instead of returning it to the pool.
          client.release(destroy ? (lost ?? toError(err)) : undefined);
          if (!connectionFailed) {
            const refused = unstorableText(err);
            if (refused) throw refused;
            const fault = storageFault(err);
            throw fault ? storeUnavailable(target, `${what}: ${fault}`, err) : err;
          }
          if (step.committing) {
            throw storeUnavailable(
              target,
              `${what}; the connection dropped while committing, so whether the change was saved is unknown`,
              err,
            );
          }
          if (attempt === 1 && !isClosed()) continue;
          throw storeUnavailable(target, what, err);
        }
      }
    },
  };
}

/** PostgreSQL refused a parameter's text: a NUL (SQLSTATE 22021), which no text column holds, or a
 * character the database's encoding lacks (22P05). The stores refuse such text before they write
 * (storable.ts); this turns what still reaches a statement (a lookup by an id holding a NUL, from a
 * library caller) into the same invalid_input instead of a driver error. */
function unstorableText(err: unknown): InvalidInputError | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (code !== "22021" && code !== "22P05") return undefined;
  return new InvalidInputError(
    `a value holds text PostgreSQL cannot store (${errorMessage(err)}): a NUL character (U+0000) or a character outside the database's encoding`,
  );
}

/** Sends statements in order, in one round trip when the connection pipelines (`pipeline: true`,
 * which the store sets on pools it creates), else one after another. Throws the first failure. */
export async function send(
  c: PoolClient,
  queries: Query[],
): Promise<QueryResult<QueryResultRow>[]> {
  if (!c.pipeline) {
    const out: QueryResult<QueryResultRow>[] = [];
    for (const q of queries) out.push(await c.query(q));
    return out;
  }
  // Pipelined queries are written as they are issued; corking the socket around the batch sends it
  // in one write instead of one per statement.
  const socket = c.connection?.stream;
  const cork = typeof socket?.cork === "function";
  if (cork) socket.cork();
  const issued = queries.map((q) => c.query(q));
  if (cork) socket.uncork();
  const settled = await Promise.allSettled(issued);
  const out: QueryResult<QueryResultRow>[] = [];
  for (const r of settled) {
    if (r.status === "rejected") throw r.reason;
    out.push(r.value);
  }
  return out;
}

function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
