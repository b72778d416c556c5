// The HTTP limit of this machine for the 64-client load (http-client.ts): a bare node:http server
// answering the three routes the load calls (create, long-poll, decide) from a Map, with no engine,
// store, authentication or validation; it only parses each body and answers JSON, as any server
// must. Measured in the same run as Airlock's server, with the clients in a child process the same
// way, it shows what the machine leaves for everything else.
import http from "node:http";
import type { AddressInfo } from "node:net";

interface Gate {
  status: "pending" | "approved";
  waiters: ((status: string) => void)[];
}

export interface BareServer {
  url: string;
  close(): Promise<void>;
}

export async function bareGateServer(): Promise<BareServer> {
  const gates = new Map<string, Gate>();
  let next = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const answer = (status: number, body: unknown) => {
        const text = JSON.stringify(body);
        res.writeHead(status, {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(text),
        });
        res.end(text);
      };
      let body: unknown = {};
      try {
        if (chunks.length) body = JSON.parse(Buffer.concat(chunks).toString());
      } catch {
        return answer(400, { detail: "the body is not JSON" });
      }
      const [, v1, requests, id, verb] = (req.url ?? "").split("?")[0]?.split("/") ?? [];
      if (v1 !== "v1" || requests !== "requests") return answer(404, { detail: "no such route" });
      if (req.method === "POST" && id === undefined) {
        const gate = { ...(body as object), id: `bare_${next++}` };
        gates.set(gate.id, { status: "pending", waiters: [] });
        return answer(201, { ...gate, status: "pending" });
      }
      const gate = id === undefined ? undefined : gates.get(id);
      if (!gate) return answer(404, { detail: "no such request" });
      if (req.method === "GET" && verb === "wait") {
        if (gate.status !== "pending") return answer(200, { id, status: gate.status });
        gate.waiters.push((status) => answer(200, { id, status }));
        return;
      }
      if (req.method === "POST" && verb === "decisions") {
        gate.status = "approved";
        for (const w of gate.waiters.splice(0)) w(gate.status);
        return answer(200, { id, status: gate.status });
      }
      return answer(404, { detail: "no such route" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
