// A job that runs one at a time and never misses a call: a call while it runs asks for one more run
// after it (calls made meanwhile share that run), so whatever changed before a call is seen by a run
// that starts after it. The engine's feed drains the audit log this way; the server re-checks its
// live credentials this way.

export interface Rerunner {
  /** Runs the job now, or once more after the run under way; resolves when no run is left. */
  run(): Promise<void>;
  /** Whether a run is under way. */
  readonly busy: boolean;
}

/** `stopped`, when it returns true, cancels the run asked for during the current one. */
export function rerunner(job: () => Promise<void>, stopped: () => boolean = () => false): Rerunner {
  let running: Promise<void> | undefined;
  let again = false;
  return {
    get busy() {
      return running !== undefined;
    },
    run() {
      if (running) {
        again = true;
        return running;
      }
      running = (async () => {
        try {
          do {
            again = false;
            await job();
          } while (again && !stopped());
        } finally {
          running = undefined;
        }
      })();
      return running;
    },
  };
}
