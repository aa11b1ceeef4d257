/**
 * Prompt caching as the Messages API documents it (platform.claude.com, "Prompt caching"), so that what a
 * client's breakpoints and a resumed session's transcript do to the bill can be measured against the stand-in:
 *
 * - The prompt is rendered tools, then system, then messages, block by block (a string content is one text
 *   block). A block with `cache_control: { type: "ephemeral", ttl? }` is a breakpoint; a top-level
 *   `cache_control` puts one on the last block (automatic caching). More than 4 breakpoints, a `ttl` other
 *   than `5m`/`1h`, or a 1-hour breakpoint after a 5-minute one is a 400.
 * - Each breakpoint writes an entry for the prefix up to and including its block, if that prefix reaches the
 *   model's minimum cacheable length; a shorter one is not cached (no error, no charge beyond input).
 * - A breakpoint reads the longest live entry at its own block or at one of the 20 blocks before it (the
 *   lookback); the request's longest hit is `cache_read_input_tokens`. Entries are per model.
 * - An entry lives 5 minutes (or 1 hour) from its last use: every hit refreshes it at no cost.
 * - `cache_creation_input_tokens` are the tokens from the hit (or the start) to the last breakpoint written,
 *   each charged at the TTL of the breakpoint that covers it (`cache_creation.ephemeral_5m_input_tokens` /
 *   `ephemeral_1h_input_tokens`); `input_tokens` are the rest (after the last breakpoint, and all of a
 *   request with none).
 *
 * Tokens are estimated as characters / 4 of each block's JSON (its `cache_control` left out). Not modelled:
 * changes of `tool_choice`, thinking or images invalidating part of the cache, and entries becoming usable only
 * once the first answer has begun (the stand-in answers requests one at a time per client).
 */
import { createHash } from "node:crypto";

export const FIVE_MINUTES_MS = 5 * 60_000;
export const ONE_HOUR_MS = 60 * 60_000;
export const LOOKBACK_BLOCKS = 20;
export const MAX_BREAKPOINTS = 4;

export type CacheUsage = {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
};

export type CacheOutcome = { ok: true; usage: CacheUsage } | { ok: false; message: string };

type Ttl = "5m" | "1h";
type Block = { key: string; tokens: number; breakpoint: Ttl | null };

/** The least prefix each model caches, in tokens (the documented table); others: 1 024. */
const MINIMUMS: [RegExp, number][] = [
  [/opus-[5-9]|fable-5|mythos-5/, 512],
  [/opus-4-(5|6)|haiku-4-5/, 4_096],
  [/opus-4-7|sonnet-4-6|haiku-3|3-5-haiku|3-haiku/, 2_048],
];

export function minimumCacheable(model: string): number {
  return MINIMUMS.find(([pattern]) => pattern.test(model))?.[1] ?? 1_024;
}

export class PromptCache {
  /** Entry per model and prefix: when it expires, and its lifetime (a hit extends it by that much). */
  private readonly entries = new Map<string, { expiresAt: number; ttlMs: number }>();

  private readonly now: () => number;

  // No parameter property: the benchmarks run this file on Node's type stripping, which has none.
  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  /** What the request reads from and writes to the cache; the cache is updated as the API would. */
  use(body: Record<string, unknown>): CacheOutcome {
    const rendered = render(body);
    if (!rendered.ok) return rendered;
    const { blocks } = rendered;
    const model = String(body.model ?? "");
    const now = this.now();
    const prefixKeys = prefixes(model, blocks);
    const tokensBefore = cumulative(blocks);
    const breakpoints = blocks.flatMap((block, i) => (block.breakpoint ? [i] : []));

    // The longest live entry any breakpoint finds within its lookback: every hit is refreshed.
    let hit = -1;
    for (const b of breakpoints) {
      for (let i = b; i >= Math.max(0, b - LOOKBACK_BLOCKS); i--) {
        const entry = this.entries.get(prefixKeys[i] ?? "");
        if (!entry || entry.expiresAt <= now) continue;
        entry.expiresAt = now + entry.ttlMs;
        hit = Math.max(hit, i);
        break;
      }
    }
    const read = hit >= 0 ? (tokensBefore[hit + 1] ?? 0) : 0;

    // Each breakpoint past the hit writes its prefix; the tokens it adds are charged at its own lifetime.
    const written = { "5m": 0, "1h": 0 };
    let covered = hit;
    const minimum = minimumCacheable(model);
    for (const b of breakpoints) {
      if (b <= covered) continue;
      const ttl = blocks[b]?.breakpoint ?? "5m";
      if ((tokensBefore[b + 1] ?? 0) < minimum) continue;
      written[ttl] += (tokensBefore[b + 1] ?? 0) - (tokensBefore[covered + 1] ?? 0);
      const ttlMs = ttl === "1h" ? ONE_HOUR_MS : FIVE_MINUTES_MS;
      this.entries.set(prefixKeys[b] ?? "", { expiresAt: now + ttlMs, ttlMs });
      covered = b;
    }
    const total = tokensBefore[blocks.length] ?? 0;
    const creation = written["5m"] + written["1h"];
    return {
      ok: true,
      usage: {
        input_tokens: total - read - creation,
        cache_creation_input_tokens: creation,
        cache_read_input_tokens: read,
        cache_creation: {
          ephemeral_5m_input_tokens: written["5m"],
          ephemeral_1h_input_tokens: written["1h"],
        },
      },
    };
  }
}

/** The request's blocks in the order the API renders them, and its breakpoints checked. */
function render(
  body: Record<string, unknown>,
): { ok: true; blocks: Block[] } | { ok: false; message: string } {
  const asBlocks = (value: unknown): unknown[] =>
    typeof value === "string" ? [{ type: "text", text: value }] : Array.isArray(value) ? value : [];
  const messages = asBlocks(body.messages) as { role?: unknown; content?: unknown }[];
  const raw: { role: string; value: unknown }[] = [
    ...asBlocks(body.tools).map((value) => ({ role: "tool", value })),
    ...asBlocks(body.system).map((value) => ({ role: "system", value })),
    ...messages.flatMap((m) => asBlocks(m.content).map((value) => ({ role: String(m.role), value }))),
  ];
  const blocks: Block[] = [];
  for (const { role, value } of raw) {
    const ttl = ttlOf((value as { cache_control?: unknown } | null)?.cache_control);
    if (ttl === "invalid") return { ok: false, message: "cache_control.ttl: must be one of '5m', '1h'" };
    const content = stable(value);
    blocks.push({ key: `${role}:${content}`, tokens: estimateTokens(content), breakpoint: ttl });
  }
  const automatic = ttlOf(body.cache_control);
  if (automatic === "invalid") return { ok: false, message: "cache_control.ttl: must be one of '5m', '1h'" };
  const last = blocks.at(-1);
  if (automatic && last && !last.breakpoint) last.breakpoint = automatic;
  const marks = blocks.filter((b) => b.breakpoint);
  if (marks.length > MAX_BREAKPOINTS)
    return {
      ok: false,
      message: `A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${marks.length}.`,
    };
  const firstShort = marks.findIndex((b) => b.breakpoint === "5m");
  if (firstShort >= 0 && marks.slice(firstShort).some((b) => b.breakpoint === "1h"))
    return {
      ok: false,
      message: "a cache_control block with ttl '1h' must not come after one with ttl '5m'",
    };
  return { ok: true, blocks };
}

function ttlOf(control: unknown): Ttl | null | "invalid" {
  if (control === undefined || control === null) return null;
  const { type, ttl } = control as { type?: unknown; ttl?: unknown };
  if (type !== "ephemeral") return "invalid";
  if (ttl === undefined || ttl === "5m") return "5m";
  return ttl === "1h" ? "1h" : "invalid";
}

/** Keys of every prefix: `model` and the blocks up to and including each one. */
function prefixes(model: string, blocks: readonly Block[]): string[] {
  let key = model;
  return blocks.map((block) => {
    key = hash(`${key}\u0000${block.key}`);
    return key;
  });
}

/** Tokens before each block (and, last, in all of them). */
function cumulative(blocks: readonly Block[]): number[] {
  const sums = [0];
  for (const block of blocks) sums.push((sums.at(-1) ?? 0) + block.tokens);
  return sums;
}

// Breakpoints move with every turn; where they sit is no part of the prefix.
function stable(value: unknown): string {
  return JSON.stringify(value, (key, v) => (key === "cache_control" ? undefined : v));
}

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function hash(text: string): string {
  return createHash("sha256").update(text).digest("base64");
}
