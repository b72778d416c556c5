// The LISTEN connection's life cycle, with fake connections (no database needed): connect on the
// first listener, re-read after every (re)connect, ignore our own signals, reconnect with backoff,
// close when idle, stop for good on close.
import { EventEmitter } from "node:events";
import type { ClientBase } from "pg";
import { describe, expect, it } from "vitest";
import { createChangeListener, type ListenConnection } from "../../src/store/postgres-listener.js";

class FakeClient extends EventEmitter {
  queries: string[] = [];
  released = false;
  async query(text: string) {
    this.queries.push(text);
    return { rows: [] };
  }
  notify(payload: string, channel = "airlock:s") {
    this.emit("notification", { processId: 1, channel, payload });
  }
  drop() {
    this.emit("error", new Error("Connection terminated unexpectedly"));
    this.emit("end");
  }
}

function setup(options: { failFirst?: number; idleMs?: number } = {}) {
  const clients: FakeClient[] = [];
  const errors: unknown[] = [];
  let failures = options.failFirst ?? 0;
  const listener = createChangeListener({
    channel: "airlock:s",
    channelIdent: '"airlock:s"',
    selfId: "me",
    idleMs: options.idleMs ?? 50,
    minBackoffMs: 5,
    maxBackoffMs: 20,
    onError: (err) => errors.push(err),
    connect: async (): Promise<ListenConnection> => {
      if (failures > 0) {
        failures--;
        throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), {
          code: "ECONNREFUSED",
        });
      }
      const client = new FakeClient();
      clients.push(client);
      return {
        client: client as unknown as ClientBase, // the listener uses only on() and query()
        release: async () => {
          client.released = true;
        },
      };
    },
  });
  return { listener, clients, errors };
}

const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(check: () => boolean, timeoutMs = 2000) {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await tick(2);
  }
}

describe("postgres change listener", () => {
  it("listens on first use, signals once connected, and ignores its own notifications", async () => {
    const { listener, clients } = setup();
    let calls = 0;
    listener.add(() => calls++);
    await until(() => calls === 1);
    expect(clients).toHaveLength(1);
    expect(clients[0]?.queries).toEqual(['LISTEN "airlock:s"']);
    clients[0]?.notify("me");
    clients[0]?.notify("someone-else", "airlock:other-schema");
    expect(calls).toBe(1);
    clients[0]?.notify("someone-else");
    expect(calls).toBe(2);
    await listener.close();
    expect(clients[0]?.released).toBe(true);
  });

  it("reconnects with backoff after the connection drops, then signals to re-read", async () => {
    const { listener, clients, errors } = setup();
    let calls = 0;
    listener.add(() => calls++);
    await until(() => calls === 1);
    clients[0]?.drop();
    await until(() => calls === 2);
    expect(clients).toHaveLength(2);
    expect(clients[0]?.released).toBe(true);
    expect(errors).toHaveLength(1);
    // A late event from the old connection changes nothing.
    clients[0]?.drop();
    await tick(30);
    expect(clients).toHaveLength(2);
    await listener.close();
  });

  it("keeps trying while the database refuses, and recovers", async () => {
    const { listener, clients, errors } = setup({ failFirst: 3 });
    let calls = 0;
    listener.add(() => calls++);
    await until(() => calls === 1);
    expect(errors).toHaveLength(3);
    expect(clients).toHaveLength(1);
    await listener.close();
  });

  it("closes the connection when idle and reopens it when needed", async () => {
    const { listener, clients } = setup({ idleMs: 30 });
    let calls = 0;
    const stop = listener.add(() => calls++);
    await until(() => calls === 1);
    stop();
    stop(); // twice is harmless
    await until(() => clients[0]?.released === true);
    listener.add(() => calls++);
    await until(() => calls === 2);
    expect(clients).toHaveLength(2);
    await listener.close();
    await listener.close();
    expect(clients[1]?.released).toBe(true);
    const late = listener.add(() => calls++);
    late();
    await tick(20);
    expect(clients).toHaveLength(2);
  });
});
