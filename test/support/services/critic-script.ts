/**
 * Critic answers for the Messages-API stand-in, queued per issue: a test says what the critic answers for
 * `<repo>#<n>` (a report, a malformed report, no tool call), one answer per critic request, in order. The
 * vault's classifier is answered likewise from `<repo>#vault` (a `report` is then the verdict tool's input).
 */
import type { ScriptRequest, Turn } from "../model/script.ts";

export type CriticAnswer = { report: unknown } | { text: string };

export class CriticScript {
  private readonly queues = new Map<string, CriticAnswer[]>();
  /** The critic requests seen per issue, answered or not: a test of the critic on a runner expects none. */
  private readonly seen = new Map<string, number>();
  /** The prompt of each critic request per issue, oldest first. */
  private readonly asked = new Map<string, string[]>();

  calls(key: string): number {
    return this.seen.get(key) ?? 0;
  }

  prompts(key: string): string[] {
    return this.asked.get(key) ?? [];
  }

  enqueue(key: string, answers: CriticAnswer[]): void {
    this.queues.set(key, [...(this.queues.get(key) ?? []), ...answers]);
  }

  /** The next answer for the issue this request reviews; the last answer repeats once the queue runs dry. */
  turn(req: ScriptRequest): Turn {
    const repo = /^Repository: (\S+)$/m.exec(req.lastUserText)?.[1];
    // The vault's classifier (src/vault/classifier.ts) is answered from the repository's `<repo>#vault` queue.
    const number =
      req.forcedTool === "vault_verdict" ? "vault" : /<issue number="(\d+)"/.exec(req.lastUserText)?.[1];
    const key = `${repo}#${number}`;
    this.seen.set(key, this.calls(key) + 1);
    this.asked.set(key, [...this.prompts(key), req.lastUserText]);
    const queue = this.queues.get(key);
    if (!queue || queue.length === 0) {
      return {
        error: { status: 500, type: "api_error", message: `no critic answer queued for ${repo}#${number}` },
      };
    }
    const answer = (queue.length > 1 ? queue.shift() : queue[0]) as CriticAnswer;
    if ("text" in answer) return { content: [{ type: "text", text: answer.text }] };
    return {
      content: [
        {
          type: "tool_use",
          name: req.forcedTool ?? "report",
          input: answer.report as Record<string, unknown>,
        },
      ],
    };
  }
}
