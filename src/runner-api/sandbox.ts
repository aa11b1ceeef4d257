/** Where a runner runs its sessions, as it reports it: `none` is a runner started with `--unsafe-no-sandbox`. */
export const SANDBOX_KINDS = ["bubblewrap", "none"] as const;
