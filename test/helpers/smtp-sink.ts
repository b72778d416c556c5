// A local SMTP server for tests: listens on 127.0.0.1 (port 0), accepts every mail without
// authentication or TLS, and keeps each one, parsed with mailparser. `answer` can make it refuse
// recipients with a chosen SMTP code (a 5xx or a 4xx), to test how senders classify failures.
import type { AddressInfo } from "node:net";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

export interface SinkMail {
  envelope: { from: string | false; to: string[] };
  raw: Buffer;
  parsed: ParsedMail;
}

export interface SmtpSink {
  port: number;
  mails: SinkMail[];
  /** Refuse RCPT TO for addresses this returns a code for (e.g. 550, 451). */
  answer: ((recipient: string) => number | undefined) | undefined;
  /** Resolves once `count` mails arrived; rejects after `timeoutMs` (a bound, not an assertion). */
  waitFor(count: number, timeoutMs?: number): Promise<SinkMail[]>;
  close(): Promise<void>;
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const mails: SinkMail[] = [];
  const waiters = new Set<() => void>();
  const sink: SmtpSink = {
    port: 0,
    mails,
    answer: undefined,
    waitFor(count, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (mails.length < count) return false;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(mails.slice(0, count));
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(`the SMTP sink got ${mails.length} mails, not ${count}, in ${timeoutMs} ms`),
          );
        }, timeoutMs);
        if (!check()) waiters.add(check);
      });
    },
    close: async () => undefined,
  };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["AUTH", "STARTTLS"],
    logger: false,
    closeTimeout: 1000,
    onRcptTo(address, _session, callback) {
      const code = sink.answer?.(address.address);
      if (code === undefined) return callback();
      return callback(
        Object.assign(new Error(`refused by the test sink (${code})`), { responseCode: code }),
      );
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks);
        simpleParser(raw).then(
          (parsed) => {
            mails.push({
              envelope: {
                from:
                  session.envelope.mailFrom === false ? false : session.envelope.mailFrom.address,
                to: session.envelope.rcptTo.map((r) => r.address),
              },
              raw,
              parsed,
            });
            for (const w of [...waiters]) w();
            callback();
          },
          (err: Error) => callback(err),
        );
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  sink.port = (server.server.address() as AddressInfo).port;
  sink.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return sink;
}
