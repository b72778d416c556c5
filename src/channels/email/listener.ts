// The SMTP listener for replies: accepts mail only for this channel's reply addresses, at most
// 1 MiB, without authentication (the reply token in the address is the credential) and without
// STARTTLS (run it behind the MX that terminates TLS and checks SPF/DKIM, or on 127.0.0.1).
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import { SMTPServer } from "smtp-server";
import { type Envelope, errorText, type InboundResult, MAX_INBOUND_BYTES } from "./inbound.js";

export interface ReplyListener {
  /** The port listened on (the one asked for, or the one given for port 0). */
  port: number;
  close(): Promise<void>;
}

function smtpError(message: string, responseCode: number): Error {
  return Object.assign(new Error(message), { responseCode });
}

export async function listenForReplies(options: {
  host: string;
  port: number;
  replyLocalPart: string;
  replyDomain: string;
  logger: Logger;
  handle(raw: Buffer, envelope: Envelope): Promise<InboundResult>;
}): Promise<ReplyListener> {
  const prefix = `${options.replyLocalPart}+`.toLowerCase();
  const suffix = `@${options.replyDomain}`.toLowerCase();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["AUTH", "STARTTLS"],
    size: MAX_INBOUND_BYTES,
    logger: false,
    banner: "Airlock reply listener",
    socketTimeout: 60_000,
    maxClients: 100,
    closeTimeout: 5_000,
    onRcptTo(address, _session, callback) {
      const a = address.address.toLowerCase();
      if (a.startsWith(prefix) && a.endsWith(suffix)) return callback();
      return callback(smtpError(`<${address.address}>: no such reply address here`, 550));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_INBOUND_BYTES) chunks.push(chunk);
      });
      stream.on("error", (err) => callback(err));
      stream.on("end", () => {
        if (stream.sizeExceeded) {
          return callback(smtpError("message larger than 1 MiB", 552));
        }
        const envelope: Envelope = {
          mailFrom: session.envelope.mailFrom === false ? false : session.envelope.mailFrom.address,
          rcptTo: session.envelope.rcptTo.map((r) => r.address),
        };
        options.handle(Buffer.concat(chunks), envelope).then(
          () => callback(),
          (err: unknown) => {
            options.logger.error({ err: errorText(err) }, "email reply could not be handled");
            callback(smtpError("temporary failure handling the reply; try again later", 451));
          },
        );
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once("error", onError);
    server.listen(options.port, options.host, () => {
      server.off("error", onError);
      resolve();
    });
  });
  server.on("error", (err) =>
    options.logger.warn({ err: errorText(err) }, "email reply listener error"),
  );
  const port = (server.server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    port,
    close() {
      closing ??= new Promise<void>((resolve) => server.close(() => resolve()));
      return closing;
    },
  };
}
