import type { FC } from "hono/jsx";

export const LoginPage: FC<{
  error?: string | undefined;
  next?: string | undefined;
  csrf: string;
}> = ({ error, next, csrf }) => (
  <div class="login card">
    <h1>Sign in to the Airlock inbox</h1>
    <p class="muted">
      Paste a reviewer token (<code>airlock token create --role reviewer --name you</code>).
    </p>
    <form method="post" action="/login">
      <input type="hidden" name="next" value={next ?? "/"} />
      <input type="hidden" name="_csrf" value={csrf} />
      <label for="token">Token</label>
      <input
        id="token"
        type="password"
        name="token"
        autocomplete="current-password"
        required
        autofocus
      />
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      <div class="actions">
        <button class="primary" type="submit">
          Sign in
        </button>
      </div>
    </form>
  </div>
);
