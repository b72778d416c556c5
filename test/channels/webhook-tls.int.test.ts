// HTTPS with the connection pinned: the socket goes to the checked address while TLS still checks the
// certificate against the URL's host name. Needs the `openssl` command to make a throwaway certificate.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWebhookChannel, generateWebhookSecret } from "../../src/channels/webhook.js";

function haveOpenssl(): boolean {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const OPENSSL = haveOpenssl();
if (!OPENSSL) console.warn("webhook-tls tests skipped: the `openssl` command is not available");

describe.skipIf(!OPENSSL)("webhook over https", () => {
  let server: Server;
  let port: number;
  let hits = 0;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "airlock-webhook-tls-"));
    try {
      execFileSync(
        "openssl",
        [
          "req",
          "-x509",
          "-newkey",
          "rsa:2048",
          "-nodes",
          "-days",
          "1",
          "-subj",
          "/CN=hooks.test",
          "-addext",
          "subjectAltName=DNS:hooks.test",
          "-keyout",
          join(dir, "key.pem"),
          "-out",
          join(dir, "cert.pem"),
        ],
        { stdio: "ignore" },
      );
      server = createServer(
        { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) },
        (_req, res) => {
          hits += 1;
          res.end("ok");
        },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("reaches the pinned address and verifies the certificate (a self-signed one is refused)", async () => {
    const lines: string[] = [];
    const driver = createWebhookChannel(
      "hooks",
      {
        type: "webhook",
        url: `https://hooks.test:${port}/x`,
        secret: generateWebhookSecret(),
        allowPrivateTargets: true,
      },
      {
        logger: pino({ level: "trace" }, { write: (line: string) => lines.push(line) }),
        resolve: async () => [{ address: "127.0.0.1", family: 4 }],
      },
    );
    const now = Date.now();
    const result = await driver.deliver(
      {
        id: "msg_tls",
        target: "hooks",
        topic: "test",
        payload: {},
        status: "pending",
        attempts: 1,
        availableAt: now,
        createdAt: now,
        updatedAt: now,
      },
      {
        request: undefined,
        previous: [],
        publicUrl: "https://airlock.example.test",
        now: () => Date.now(),
        signal: new AbortController().signal,
      },
    );
    // The handshake happened (the name "hooks.test" resolves nowhere else), and failed on trust:
    // the certificate is self-signed, and certificates are never skipped.
    expect(result).toMatchObject({ ok: false, retry: true });
    expect(!result.ok && result.error).toMatch(/self.signed certificate/i);
    expect(hits).toBe(0);
  });
});
