import { gitDir } from "./forge.ts";
import { branchHeads } from "./git/refs.ts";
import { initBare, type SeedFiles, seedBranch } from "./git/seed.ts";
import type { Repo, User } from "./state.ts";
import { fullName, type Store } from "./store.ts";

export interface NewRepo {
  /** Created as a plain user when missing. */
  owner: string;
  name: string;
  private?: boolean;
  description?: string;
  /** Default `main`. */
  defaultBranch?: string;
  /** The first commit of the default branch: a directory's files, or path → content. Empty repository without. */
  seed?: { dir: string } | { files: SeedFiles };
  /** Run by CI instead of `sh ./ci.sh`. */
  ciCommand?: string;
}

export function ensureUser(store: Store, login: string, admin: boolean): User {
  return store.userByLogin(login) ?? store.createUser(login, { admin });
}

/** A bare repository under `reposDir` and its entry in the state, seeded by its owner when asked. */
export async function createRepository(store: Store, reposDir: string, input: NewRepo): Promise<Repo> {
  if (store.repo(input.owner, input.name))
    throw new RangeError(`local forge: ${input.owner}/${input.name} exists`);
  const owner = ensureUser(store, input.owner, false);
  const repo: Repo = {
    id: store.nextId(),
    owner: owner.login,
    name: input.name,
    description: input.description ?? "",
    private: input.private ?? false,
    defaultBranch: input.defaultBranch ?? "main",
    createdAt: store.now(),
    branches: {},
    collaborators: [],
    labels: [],
    issues: [],
    statuses: [],
    checkSuites: [],
    checkRuns: [],
    hooks: [],
    ciCommand: input.ciCommand ?? null,
    mergeStyles: { merge: true, squash: true, rebase: true },
    protections: [],
  };
  const dir = gitDir(reposDir, repo);
  await initBare(dir, repo.defaultBranch);
  if (input.seed)
    await seedBranch(dir, repo.defaultBranch, input.seed, { name: owner.login, email: owner.email });
  repo.branches = await branchHeads(dir);
  store.state.repos.push(repo);
  store.save();
  return repo;
}

/** `owner/name` → the repository; throws for an unknown one. */
export function requireRepo(store: Store, name: string): Repo {
  const repo = store.state.repos.find(
    (candidate) => fullName(candidate).toLowerCase() === name.toLowerCase(),
  );
  if (!repo) throw new RangeError(`local forge: no repository ${name}`);
  return repo;
}
