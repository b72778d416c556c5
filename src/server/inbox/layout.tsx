// The page shell shared by every inbox page.
import type { Child, FC } from "hono/jsx";

export interface LayoutProps {
  title: string;
  user?: { name: string; csrf: string } | undefined;
  /** "queue" or "request": which live updates the page script runs. */
  live?: "queue" | "request";
  requestId?: string;
  /** The audit position the page was rendered at: live updates resume from there, so nothing that
   * happens between rendering and the stream connecting is missed. */
  after?: number;
  children?: Child;
}

export const Layout: FC<LayoutProps> = ({ title, user, live, requestId, after, children }) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <link rel="icon" href="/assets/favicon.svg" />
      <title>{title}</title>
      <link rel="stylesheet" href="/assets/inbox.css" />
      <script src="/assets/htmx.min.js" defer></script>
      <script src="/assets/inbox.js" defer></script>
    </head>
    <body
      data-live={live}
      data-request-id={requestId}
      data-after={after === undefined ? undefined : String(after)}
    >
      <header class="top">
        <nav>
          <a class="brand" href="/">
            Airlock
          </a>
          {user ? (
            <>
              <a href="/">Inbox</a>
              <a href="/dashboard">Metrics</a>
              <a href="/inbox/trust">Trust</a>
            </>
          ) : null}
        </nav>
        {user ? (
          <div>
            <span>{user.name}</span>{" "}
            <form method="post" action="/logout">
              <input type="hidden" name="_csrf" value={user.csrf} />
              <button type="submit">Sign out</button>
            </form>
          </div>
        ) : null}
      </header>
      <main>{children}</main>
    </body>
  </html>
);
