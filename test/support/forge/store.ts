import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type CollaboratorLevel,
  emptyState,
  type ForgeState,
  forgeState,
  type Issue,
  type Repo,
  type User,
} from "./state.ts";

const STATE_FILE = "state.json";

/** The state document, its persistence (atomic rewrite after every change) and the lookups everyone needs. */
export class Store {
  readonly state: ForgeState;
  readonly #file: string;

  private constructor(file: string, state: ForgeState) {
    this.#file = file;
    this.state = state;
  }

  static open(dataDir: string): Store {
    const file = join(dataDir, STATE_FILE);
    if (!existsSync(file)) return new Store(file, emptyState());
    const parsed = forgeState.safeParse(JSON.parse(readFileSync(file, "utf8")));
    if (!parsed.success)
      throw new Error(`local forge: ${file} is not a valid state: ${parsed.error.message}`);
    return new Store(file, parsed.data);
  }

  /** Written to a temporary file and renamed over the old one, so a crash never leaves half a state. */
  save(): void {
    const temporary = `${this.#file}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(this.state, null, 2));
    renameSync(temporary, this.#file);
  }

  nextId(): number {
    this.state.lastId += 1;
    return this.state.lastId;
  }

  /** RFC 3339 in seconds, as Gitea formats times. */
  now(): string {
    return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
  }

  user(id: number): User {
    const user = this.state.users.find((candidate) => candidate.id === id);
    if (!user) throw new Error(`local forge: no user ${id}`);
    return user;
  }

  /** Logins compare case-insensitively, as on Gitea. */
  userByLogin(login: string): User | undefined {
    const wanted = login.toLowerCase();
    return this.state.users.find((user) => user.login.toLowerCase() === wanted);
  }

  userByToken(value: string): User | undefined {
    const token = this.state.tokens.find((candidate) => candidate.value === value);
    return token && this.user(token.userId);
  }

  createUser(login: string, options: { admin?: boolean; email?: string } = {}): User {
    if (!/^[\w.-]+$/.test(login)) throw new RangeError(`local forge: invalid login ${JSON.stringify(login)}`);
    if (this.userByLogin(login)) throw new RangeError(`local forge: user ${login} exists`);
    const user: User = {
      id: this.nextId(),
      login,
      email: options.email ?? `${login}@noreply.localhost`,
      fullName: "",
      isAdmin: options.admin ?? false,
      createdAt: this.now(),
    };
    this.state.users.push(user);
    return user;
  }

  /** A new access token for the user: 40 hex digits, like Gitea's. */
  createToken(user: User, value = randomBytes(20).toString("hex")): string {
    this.state.tokens.push({
      id: this.nextId(),
      userId: user.id,
      name: `token-${value.slice(0, 8)}`,
      value,
      createdAt: this.now(),
    });
    return value;
  }

  /** Owner and name compare case-insensitively, as on Gitea. */
  repo(owner: string, name: string): Repo | undefined {
    const fullName = `${owner}/${name}`.toLowerCase();
    return this.state.repos.find((repo) => fullName === `${repo.owner}/${repo.name}`.toLowerCase());
  }

  issue(repo: Repo, index: number): Issue | undefined {
    return repo.issues.find((issue) => issue.index === index);
  }
}

export function fullName(repo: Repo): string {
  return `${repo.owner}/${repo.name}`;
}

/** Adds a collaborator, or changes the level of one. */
export function setCollaborator(repo: Repo, user: User, level: CollaboratorLevel): void {
  repo.collaborators = [
    ...repo.collaborators.filter((entry) => entry.userId !== user.id),
    { userId: user.id, level },
  ];
}
