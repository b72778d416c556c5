// A failure the command line reports as one line on stderr, with its exit code.
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 4) {
    super(message);
    this.name = "CliError";
    this.exitCode = exitCode;
  }
}
