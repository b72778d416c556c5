// MCP progress of a waiting tool call never passes its total and always increases (issue 32: a client
// showed 12001/12000). The bound's last slice ends when its timer fires, and a timer fires late on a
// busy event loop: here the loop is made busy on purpose (a synchronous stretch longer than the
// bound), so the time waited is well past the bound when the last progress is reported.
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { Client } from "@modelcontextprotocol/client";
import { createMcpHandler, InMemoryTransport, McpServer } from "@modelcontextprotocol/server";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createMcpProxy,
  createMcpServer,
  parseProxyConfig,
  waitBounded,
} from "../../src/adapters/mcp.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { sqliteStore } from "../../src/store/sqlite.js";

let airlock: Airlock;

beforeEach(async () => {
  airlock = await createAirlock({ store: sqliteStore(":memory:") });
});

afterEach(async () => {
  await airlock.close();
});

/** Keeps the event loop busy for `ms`, starting `afterMs` from now. */
function busyLater(afterMs: number, ms: number): Promise<void> {
  return new Promise((resolve) =>
    setTimeout(() => {
      const end = performance.now() + ms;
      while (performance.now() < end) {
        // A synchronous stretch: no timer fires until it ends.
      }
      resolve();
    }, afterMs),
  );
}

function expectWithinAndIncreasing(progress: { progress: number; total?: number }[], max: number) {
  expect(progress.length).toBeGreaterThan(0);
  for (const [i, p] of progress.entries()) {
    expect(p.total).toBe(max);
    expect(p.progress).toBeGreaterThan(0);
    expect(p.progress).toBeLessThanOrEqual(max);
    if (i > 0) expect(p.progress).toBeGreaterThan(progress[i - 1]?.progress as number);
  }
}

describe("waitBounded progress", () => {
  it("reports at most the bound, and more each time, when the last slice ends late", async () => {
    const r = await airlock.request({ title: "Rotate keys", timeoutMs: 60_000 });
    const progress: { progress: number; total: number }[] = [];
    const busy = busyLater(220, 300);
    const done = await waitBounded(airlock, r.id, {
      maxMs: 300,
      progressIntervalMs: 50,
      onProgress: (waited, total) => {
        progress.push({ progress: waited, total });
      },
    });
    await busy;
    expect(done.status).toBe("pending");
    // Slices of 50 ms up to ~220 ms, then the busy stretch takes the time waited to ~520 ms.
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expectWithinAndIncreasing(progress, 300);
    // The wait ended past the bound, so the last report is the bound itself (it was ~520 before).
    expect(progress.at(-1)?.progress).toBe(300);
  });
});

describe("createMcpServer progress notifications", () => {
  it("a waiting request_approval never reports progress past its total", async () => {
    const server = createMcpServer(airlock, { requester: "agent", maxWaitMs: 300 });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "progress-test", version: "1.0.0" });
    try {
      await client.connect(clientSide);
      const progress: { progress: number; total?: number }[] = [];
      const call = client.callTool(
        { name: "request_approval", arguments: { title: "Deploy api", wait: true } },
        { onprogress: (p) => progress.push({ progress: p.progress, total: p.total }) },
      );
      // Once the gate is open and its wait under way, the loop is busy longer than the bound.
      for (let i = 0; i < 500; i++) {
        if ((await airlock.list({ status: "pending" })).items.length > 0) break;
        await new Promise((r) => setTimeout(r, 5));
      }
      expect((await airlock.list({ status: "pending" })).items).toHaveLength(1);
      await busyLater(50, 400);
      const result = await call;
      expect((result.structuredContent as { status: string }).status).toBe("pending");
      expectWithinAndIncreasing(progress, 300);
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe("createMcpProxy progress notifications", () => {
  it("a gated call waiting for approval never reports progress past its total", async () => {
    const upstream = createMcpHandler(() => {
      const server = new McpServer({ name: "upstream", version: "1" });
      server.registerTool("pay", { inputSchema: z.object({ amount: z.number() }) }, async (a) => ({
        content: [{ type: "text", text: `paid ${a.amount}` }],
      }));
      return server;
    });
    const http = serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => upstream.fetch(req) });
    await new Promise<void>((resolve) => http.once("listening", () => resolve()));
    const proxy = createMcpProxy({
      api: airlock,
      config: parseProxyConfig({ rules: [{ name: "payments", tools: "pay" }] }),
      upstream: { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp` },
      requester: "agent",
      maxWaitMs: 300,
      log: () => {},
    });
    const client = new Client({ name: "progress-test", version: "1.0.0" });
    try {
      await proxy.start();
      const [clientSide, proxySide] = InMemoryTransport.createLinkedPair();
      await proxy.server.connect(proxySide);
      await client.connect(clientSide);
      const progress: { progress: number; total?: number }[] = [];
      const call = client.callTool(
        { name: "pay", arguments: { amount: 5000 } },
        { onprogress: (p) => progress.push({ progress: p.progress, total: p.total }) },
      );
      for (let i = 0; i < 500; i++) {
        if ((await airlock.list({ status: "pending" })).items.length > 0) break;
        await new Promise((r) => setTimeout(r, 5));
      }
      expect((await airlock.list({ status: "pending" })).items).toHaveLength(1);
      await busyLater(50, 400);
      const result = await call;
      expect(result.isError).toBe(true);
      expectWithinAndIncreasing(progress, 300);
    } finally {
      await client.close();
      await proxy.close();
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        (http as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
    }
  });
});
