// `airlock/react`: an approval card's state as a React hook. React is an optional peer dependency;
// this module uses hooks only (no JSX), so it fits any React 18/19 app and build.
//
//   const { request, status, approve, reject, revise } = useApproval(requestId, { baseUrl, token });
//
// `token` is an embed token the app's backend minted for the signed-in user
// (POST /v1/requests/{id}/embed-token); the page never holds a long-lived API token. The hook reads
// the request, follows it live through the long-poll (so a decision made in the inbox, Slack or
// e-mail shows at once), and aborts its calls when the component unmounts or its inputs change.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { ApprovalRequest, Status } from "../core/schemas.js";
import {
  type EmbedClientOptions,
  type EmbedDecision,
  EmbedRequestError,
  embedClient,
  followApproval,
} from "./react/embed-client.js";

export {
  type EmbedClientOptions,
  type EmbedDecision,
  EmbedRequestError,
  embedClient,
  followApproval,
} from "./react/embed-client.js";

/** `loading` until the request is read (and while `requestId` or `token` is still empty), then its
 * status; `error` when it cannot be read at all (expired or foreign token, unreachable server). */
export type ApprovalStatus = "loading" | Status | "error";

export interface UseApprovalOptions extends EmbedClientOptions {}

export interface UseApproval {
  request: ApprovalRequest | undefined;
  status: ApprovalStatus;
  /** The last failure (reading, following or deciding); cleared by the next success. */
  error: Error | undefined;
  /** True while a decision is on its way. */
  deciding: boolean;
  /** Approves all, or only `selected` item ids. */
  approve(options?: { selected?: string[]; comment?: string }): Promise<ApprovalRequest>;
  reject(comment?: string): Promise<ApprovalRequest>;
  /** Asks for a revision; say what should change. */
  revise(comment: string): Promise<ApprovalRequest>;
}

interface State {
  request: ApprovalRequest | undefined;
  error: Error | undefined;
  /** Reading failed for good (401/403/404): nothing more will come. */
  failed: boolean;
  deciding: boolean;
}

const INITIAL: State = { request: undefined, error: undefined, failed: false, deciding: false };

export function useApproval(requestId: string, options: UseApprovalOptions): UseApproval {
  const { baseUrl, token } = options;
  // The latest `fetch` is used without restarting the follow, so an inline function is fine.
  const fetchRef = useRef(options.fetch);
  fetchRef.current = options.fetch;
  const client = useMemo(
    () =>
      embedClient(requestId, {
        baseUrl,
        token,
        fetch: (input, init) => (fetchRef.current ?? globalThis.fetch)(input, init),
      }),
    [requestId, baseUrl, token],
  );
  const [state, setState] = useState<State>(INITIAL);

  useEffect(() => {
    setState(INITIAL);
    // Apps often mint the token after the first render: nothing to read until both are there.
    if (!requestId || !token) return;
    const stop = new AbortController();
    void followApproval(
      client,
      (request) => setState((s) => ({ ...s, request, error: undefined })),
      (error, fatal) => setState((s) => ({ ...s, error, failed: s.failed || fatal })),
      stop.signal,
    );
    return () => stop.abort();
  }, [client, requestId, token]);

  const decide = useCallback(
    async (decision: EmbedDecision): Promise<ApprovalRequest> => {
      setState((s) => ({ ...s, deciding: true }));
      try {
        const request = await client.decide(decision);
        setState((s) => ({ ...s, request, error: undefined, deciding: false }));
        return request;
      } catch (err) {
        const error = err instanceof Error ? err : new Error(String(err));
        // Someone decided first: show what they decided.
        const winner = error instanceof EmbedRequestError ? error.request : undefined;
        setState((s) => ({ ...s, request: winner ?? s.request, error, deciding: false }));
        throw error;
      }
    },
    [client],
  );

  const approve = useCallback(
    (o: { selected?: string[]; comment?: string } = {}) =>
      decide({
        outcome: "approved",
        ...(o.selected ? { selected: o.selected } : {}),
        ...(o.comment ? { comment: o.comment } : {}),
      }),
    [decide],
  );
  const reject = useCallback(
    (comment?: string) => decide({ outcome: "rejected", ...(comment ? { comment } : {}) }),
    [decide],
  );
  const revise = useCallback((comment: string) => decide({ outcome: "revise", comment }), [decide]);

  const status: ApprovalStatus = state.request
    ? state.request.status
    : state.failed
      ? "error"
      : "loading";
  return {
    request: state.request,
    status,
    error: state.error,
    deciding: state.deciding,
    approve,
    reject,
    revise,
  };
}
