// A durable checkpointer test double: LangGraph's MemorySaver whose two tables are written to a file
// after every change (write to a temporary file, then rename: a SIGKILL leaves the old or the new
// file, never half of one) and read back when the saver is created, so a second process continues a
// thread the first one parked. Only for tests: one writer at a time, the whole file per write.
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { MemorySaver } from "@langchain/langgraph";

type Put = MemorySaver["put"];
type PutWrites = MemorySaver["putWrites"];

export class FileSaver extends MemorySaver {
  constructor(private readonly path: string) {
    super();
    if (existsSync(path)) {
      const saved = JSON.parse(readFileSync(path, "utf8"), revive) as {
        storage: MemorySaver["storage"];
        writes: MemorySaver["writes"];
      };
      Object.assign(this.storage, saved.storage);
      Object.assign(this.writes, saved.writes);
    }
  }

  override async put(...args: Parameters<Put>): ReturnType<Put> {
    const out = await super.put(...args);
    this.flush();
    return out;
  }

  override async putWrites(...args: Parameters<PutWrites>): ReturnType<PutWrites> {
    await super.putWrites(...args);
    this.flush();
  }

  override async deleteThread(threadId: string): Promise<void> {
    await super.deleteThread(threadId);
    this.flush();
  }

  private flush(): void {
    const tmp = `${this.path}.tmp`;
    writeFileSync(tmp, JSON.stringify({ storage: this.storage, writes: this.writes }, replace));
    renameSync(tmp, this.path);
  }
}

function replace(_key: string, value: unknown): unknown {
  if (value instanceof Uint8Array) return { $bytes: Buffer.from(value).toString("base64") };
  return value;
}

function revive(_key: string, value: unknown): unknown {
  if (value !== null && typeof value === "object" && "$bytes" in value) {
    const b = (value as { $bytes: unknown }).$bytes;
    if (typeof b === "string") return new Uint8Array(Buffer.from(b, "base64"));
  }
  return value;
}
