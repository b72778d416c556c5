// What the parts of the email channel share: its name, options, logger, identity directory and the
// one SMTP transport everything is sent through (requests, notices, help replies).
import type { Logger } from "pino";
import type { IdentityDirectory } from "../types.js";
import type { ComposedMail } from "./compose.js";
import type { ResolvedEmailOptions } from "./options.js";

export interface EmailContext {
  readonly name: string;
  readonly options: ResolvedEmailOptions;
  readonly logger: Logger;
  readonly identities: IdentityDirectory;
  /** Sends one mail; resolves with the message id the SMTP server accepted. */
  send(mail: ComposedMail): Promise<string>;
}
