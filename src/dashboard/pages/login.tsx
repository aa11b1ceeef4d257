export const LoginForm = (props: { next?: string; error?: string }) => (
  <form method="post" action="/dashboard/login" class="login">
    {props.error && <p class="error">{props.error}</p>}
    <label>
      Operator token
      <input type="password" name="token" autocomplete="current-password" required autofocus />
    </label>
    {props.next && <input type="hidden" name="next" value={props.next} />}
    <button type="submit">Sign in</button>
    <p class="hint">
      The Worker's <code>CONVEYOR_ADMIN_TOKEN</code>. Behind Cloudflare Access (when configured) you are
      signed in already.
    </p>
  </form>
);
