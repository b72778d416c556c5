// Where research sessions are persisted: one JSON file holding the collection, or memory. Writes are
// idempotent by `research_id`: a put deletes every record with that id, then inserts the new one
// (the delete/replace pattern), so persisting the same session twice leaves one record.
import { existsSync, readFileSync } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { ResearchSession } from "./session.js";

export interface SessionStore {
  /** Replaces the session with the same `research_id` (or adds it). */
  put(session: ResearchSession): Promise<void>;
  get(researchId: string): Promise<ResearchSession | undefined>;
  list(): Promise<ResearchSession[]>;
  deleteById(researchId: string): Promise<number>;
}

export const RESEARCH_COLLECTION = "research-sessions";

interface FileShape {
  collection: string;
  records: ResearchSession[];
}

export function memorySessionStore(): SessionStore {
  let records: ResearchSession[] = [];
  return {
    async put(session) {
      records = records.filter((r) => r.research_id !== session.research_id);
      records.push(structuredClone(session));
    },
    async get(id) {
      const found = records.find((r) => r.research_id === id);
      return found ? structuredClone(found) : undefined;
    },
    async list() {
      return structuredClone(records);
    },
    async deleteById(id) {
      const before = records.length;
      records = records.filter((r) => r.research_id !== id);
      return before - records.length;
    },
  };
}

/** A JSON file; each write goes to a temporary file renamed over the old one, so a crash never leaves
 * half a file. Writes from this process are queued one after another. */
export function jsonFileSessionStore(file: string): SessionStore {
  let queue: Promise<unknown> = Promise.resolve();
  const read = (): FileShape => {
    if (!existsSync(file)) return { collection: RESEARCH_COLLECTION, records: [] };
    const parsed: unknown = JSON.parse(readFileSync(file, "utf8"));
    const records = (parsed as Partial<FileShape> | null)?.records;
    return { collection: RESEARCH_COLLECTION, records: Array.isArray(records) ? records : [] };
  };
  const write = async (shape: FileShape) => {
    await mkdir(dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, `${JSON.stringify(shape, null, 2)}\n`, "utf8");
    await rename(tmp, file);
  };
  const serial = <T>(job: () => Promise<T>): Promise<T> => {
    const next = queue.then(job, job);
    queue = next.catch(() => undefined);
    return next;
  };
  return {
    put: (session) =>
      serial(async () => {
        const shape = read();
        shape.records = shape.records.filter((r) => r.research_id !== session.research_id);
        shape.records.push(session);
        await write(shape);
      }),
    get: async (id) => read().records.find((r) => r.research_id === id),
    list: async () => read().records,
    deleteById: (id) =>
      serial(async () => {
        const shape = read();
        const before = shape.records.length;
        shape.records = shape.records.filter((r) => r.research_id !== id);
        if (shape.records.length !== before) await write(shape);
        return before - shape.records.length;
      }),
  };
}
