/**
 * The sanitizer (src/forge/post/) on the worst an agent can post: 60 000 characters of one hazard shape,
 * composed into a quoted post as the Worker does. It runs on the object that posts, so its time is that
 * object's: the slowest shape is the figure.
 */
import { quotedPost } from "../../src/forge/post/post.ts";
import { emit, percentile } from "./load.ts";

const SIZE = 60_000;
const POLICY = { forge: "github", forgeOrigin: "https://github.com", linkHosts: [], mentions: [] } as const;

/** Each shape repeated to SIZE: what defusing rewrites most, and what makes the parser work hardest. */
const SHAPES: Record<string, string> = {
  mentions: "@user ",
  comments: "<!-- x -->",
  links: "[a](http://evil.example/x) ",
  images: "![a](http://evil.example/x.png) ",
  keywords: "fixes #12 ",
  invisible: "a\u202eb\u200bc",
  autolinks: "http://evil.example/a_b_ ",
  ticks: "`a`` ",
  brackets: "[",
  quotes: "> ",
  mixed: "@u <b>x</b> [l](http://e.x) fixes #3 `c` ",
};

export async function benchSanitizer({ rounds = 5 } = {}) {
  const medians = Object.entries(SHAPES).map(([shape, unit]) => {
    const text = unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);
    const times = Array.from({ length: rounds }, () => {
      // CPU time, not wall time: the function is pure and single-threaded, and other load does not count.
      const started = process.cpuUsage();
      quotedPost(POLICY, "The agent wrote:", text);
      const { user, system } = process.cpuUsage(started);
      return (user + system) / 1000;
    });
    return { shape, ms: percentile(times, 50) };
  });
  const slowest = medians.reduce((a, b) => (b.ms > a.ms ? b : a));
  emit({
    name: "post_hostile_60k_max_ms",
    value: slowest.ms,
    unit: `CPU ms to compose a post of ${SIZE} hostile characters, slowest shape (${slowest.shape}), median of ${rounds}`,
    // Posts are composed inside a Durable Object's request, whose CPU limit is 30 s.
    target: "< 3000",
  });
}
