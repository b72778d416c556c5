// Two Airlock servers on one PostgreSQL database (two engines, two stores with pools of their own, two
// dispatchers running at once), both routing every gate to one signed webhook: each message reaches
// the receiver exactly once, and each delivery is audited once.
import pino from "pino";
import { afterAll, expect, it } from "vitest";
import { createDispatcher } from "../../src/channels/dispatcher.js";
import { createWebhookChannel } from "../../src/channels/webhook.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { postgresStore } from "../../src/store/postgres.js";
import { startWebhookReceiver } from "../helpers/webhook-receiver.js";
import { describePg, dropSchema, freshSchema } from "./pg-env.js";

const GATES = 120;
const SECRET = `whsec_${Buffer.from("two-servers-secret-0123456789abcd").toString("base64")}`;
const silent = pino({ level: "silent" });

await describePg("postgres: two servers deliver each outbox message once", ({ url }) => {
  const schema = freshSchema("airlock_outbox2");
  afterAll(() => dropSchema(url, schema));

  it("delivers every gate's message exactly once between two dispatchers", async () => {
    const receiver = await startWebhookReceiver({ hook: SECRET });
    const servers: Array<{ airlock: Airlock; close: () => Promise<void> }> = [];
    try {
      for (let i = 0; i < 2; i++) {
        const store = postgresStore(url, { schema });
        const hook = createWebhookChannel(
          "hook",
          {
            type: "webhook",
            url: `${receiver.url}/hook`,
            secret: SECRET,
            allowPrivateTargets: true,
          },
          { logger: silent },
        );
        const dispatcher = createDispatcher({
          store,
          drivers: [hook],
          logger: silent,
          publicUrl: "http://127.0.0.1:7420",
          pollMs: 20,
          batch: 8,
        });
        const airlock = await createAirlock({
          store,
          logger: silent,
          notifiers: () => ["hook"],
          onOutbox: () => dispatcher.wake(),
        });
        dispatcher.start();
        servers.push({
          airlock,
          close: async () => {
            await dispatcher.close();
            await airlock.close();
          },
        });
      }
      const [a, b] = servers;
      if (!a || !b) throw new Error("two servers expected");
      // Gates opened on both servers at once; both dispatchers claim from the one table.
      await Promise.all(
        Array.from({ length: GATES }, (_, i) =>
          (i % 2 ? a : b).airlock.request({ title: `gate ${i}`, action: "deploy" }),
        ),
      );
      const stopAt = Date.now() + 60_000;
      while (receiver.received.length < GATES && Date.now() < stopAt) {
        await new Promise((r) => setTimeout(r, 50));
      }
      // A little longer: a double delivery would arrive now.
      await new Promise((r) => setTimeout(r, 300));
      const ids = receiver.received.map((r) => String(r.headers["webhook-id"]));
      expect(ids).toHaveLength(GATES);
      expect(new Set(ids).size).toBe(GATES);
      expect(receiver.received.every((r) => r.verified.hook?.ok)).toBe(true);
      const log = await a.airlock.outbox({ limit: 1000 });
      expect(log).toHaveLength(GATES);
      expect(log.every((m) => m.status === "delivered" && m.attempts === 1)).toBe(true);
      const notified = (await a.airlock.audit({ limit: 5000 })).filter(
        (e) => e.type === "notified",
      );
      expect(notified).toHaveLength(GATES);
      expect((await a.airlock.verifyAudit()).ok).toBe(true);
    } finally {
      for (const s of servers) await s.close();
      await receiver.close();
    }
  });
});
