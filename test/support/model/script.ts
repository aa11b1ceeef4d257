// Scripting model for the Messages API stand-in: decides the next assistant turn from the request alone, so
// a script survives restarts and resumed sessions (which replay the whole transcript).

export interface ContentBlock {
  type: string;
  [key: string]: unknown;
}

export interface MessageParam {
  // Claude Code also sends `role: "system"` entries inside `messages`.
  role: string;
  content: string | ContentBlock[];
}

export interface ToolResult {
  toolUseId: string;
  text: string;
  isError: boolean;
}

export interface ScriptRequest {
  model: string;
  system: string;
  messages: MessageParam[];
  tools: { name: string; [key: string]: unknown }[];
  /** Name of the tool forced by `tool_choice: { type: "tool", name }`. */
  forcedTool?: string;
  /** Text of the last user prompt (not a tool-result message); `role: "system"` entries are skipped. */
  lastUserText: string;
  /** Tool results carried by the last user message. */
  toolResults: ToolResult[];
  /** Assistant turns already in the conversation. */
  assistantTurns: number;
}

export type Block =
  | { type: "text"; text: string }
  | { type: "tool_use"; name: string; input: Record<string, unknown> };

export type Turn = { content: Block[] } | { error: { status: number; type: string; message: string } };

export type Step = Turn | ((req: ScriptRequest) => Turn);

export interface Rule {
  /** Matched against every human prompt of the conversation and the system prompt. */
  when?: RegExp;
  /** Only for requests that force this tool (`tool_choice: { type: "tool", name }`). */
  forced?: string;
  /** One assistant turn each; the index is the number of assistant turns after the matching prompt. */
  steps: Step[];
}

export type Script = Rule[] | ((req: ScriptRequest) => Turn | Promise<Turn>);

export const text = (value: string): Turn => ({ content: [{ type: "text", text: value }] });

export const use = (name: string, input: Record<string, unknown>): Turn => ({
  content: [{ type: "tool_use", name, input }],
});

export const bash = (command: string, description = "Run a command"): Turn =>
  use("Bash", { command, description });

// Claude Code resolves relative paths against the session's cwd. Edit refuses a file the session has
// neither read nor written (a resumed session remembers the files of its transcript).
export const write = (path: string, content: string): Turn => use("Write", { file_path: path, content });

export const edit = (path: string, oldString: string, newString: string): Turn =>
  use("Edit", { file_path: path, old_string: oldString, new_string: newString });

export const read = (path: string): Turn => use("Read", { file_path: path });

export const apiError = (status: number, type: string, message: string): Turn => ({
  error: { status, type, message },
});

/** Several steps as one assistant turn, e.g. `turn(text("Running tests"), bash("npm test"))`. */
export const turn =
  (...steps: Step[]): Step =>
  (req) => ({ content: steps.flatMap((step) => contentOf(resolve(step, req))) });

function resolve(step: Step, req: ScriptRequest): Turn {
  return typeof step === "function" ? step(req) : step;
}

export async function nextTurn(script: Script, req: ScriptRequest): Promise<Turn> {
  if (typeof script === "function") return script(req);
  const hit = match(script, req);
  if (!hit) return text(`(stand-in: no rule matches "${req.lastUserText.slice(0, 200)}")`);
  const step = hit.rule.steps[hit.index];
  return step ? resolve(step, req) : text("(stand-in: script finished)");
}

function match(rules: Rule[], req: ScriptRequest): { rule: Rule; index: number } | undefined {
  const eligible = rules.filter((rule) => rule.forced === req.forcedTool);
  // The latest matching prompt wins, so a resumed session with a new prompt moves to that prompt's rule.
  for (let i = req.messages.length - 1; i >= 0; i--) {
    const message = req.messages[i];
    if (message?.role !== "user") continue;
    // A session resumed after it was killed mid-tool gets its new prompt in the same message as the
    // interrupted call's result: a prompt a rule names counts there too.
    const prompt = isPrompt(message);
    const rule = eligible.find((r) => (r.when ? r.when.test(textOf(message)) : prompt));
    if (rule && (prompt || rule.when)) return { rule, index: countTurns(req.messages.slice(i + 1)) };
  }
  const rule = eligible.find((r) => !r.when || r.when.test(req.system));
  return rule && { rule, index: req.assistantTurns };
}

export function toScriptRequest(body: Record<string, unknown>): ScriptRequest {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as MessageParam[];
  const system =
    typeof body.system === "string"
      ? body.system
      : textOf({ role: "system", content: asBlocks(body.system) });
  const choice = body.tool_choice as { type?: string; name?: string } | undefined;
  const conversation = messages.filter((m) => m.role !== "system");
  const lastUser = conversation.findLast((m) => m.role === "user" && isPrompt(m));
  const last = conversation.at(-1);
  return {
    model: String(body.model ?? ""),
    system,
    messages,
    tools: (Array.isArray(body.tools) ? body.tools : []) as ScriptRequest["tools"],
    ...(choice?.type === "tool" && choice.name ? { forcedTool: choice.name } : {}),
    lastUserText: lastUser ? textOf(lastUser) : "",
    toolResults: last?.role === "user" ? toolResultsOf(last) : [],
    assistantTurns: countTurns(messages),
  };
}

function contentOf(turn: Turn): Block[] {
  return "content" in turn ? turn.content : [];
}

function asBlocks(content: unknown): ContentBlock[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? (content as ContentBlock[]) : [];
}

function textOf(message: MessageParam): string {
  return asBlocks(message.content)
    .filter((b) => b.type === "text" && typeof b.text === "string")
    .map((b) => b.text)
    .join("\n");
}

// A user message carrying tool results continues a turn even if reminders are attached to it.
function isPrompt(message: MessageParam): boolean {
  return !asBlocks(message.content).some((b) => b.type === "tool_result");
}

// Consecutive assistant messages (split blocks of one response) count as one turn.
function countTurns(messages: MessageParam[]): number {
  return messages.filter((m, i) => m.role === "assistant" && messages[i - 1]?.role !== "assistant").length;
}

function toolResultsOf(message: MessageParam): ToolResult[] {
  return asBlocks(message.content)
    .filter((b) => b.type === "tool_result")
    .map((b) => ({
      toolUseId: String(b.tool_use_id),
      text:
        typeof b.content === "string" ? b.content : textOf({ role: "user", content: asBlocks(b.content) }),
      isError: b.is_error === true,
    }));
}
