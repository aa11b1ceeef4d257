/** Registered projects in D1; their secrets are sealed at rest and opened only where a call needs them. */
import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { z } from "zod";
import { importSecretsKey, open, seal } from "../crypto/secrets.ts";
import { projects } from "../db/schema.ts";
import type { BackoffPolicy } from "../domain/backoff.ts";
import type { Env } from "../env.ts";
import { DEFAULT_HTTP_BACKOFF } from "../forge/client/http.ts";
import { createForgeClient, type ForgeClient, type ForgeClientOptions } from "../forge/client/index.ts";
import { pacingOf, tokenPacer } from "../forge/pacer.ts";
import {
  actionSecretsSchema,
  defaultCloneUrl,
  type ProjectRegistration,
  type ProjectSettings,
  settingsSchema,
} from "./config.ts";

export type Project = {
  id: string;
  forge: ProjectRegistration["forge"];
  apiUrl: string;
  repo: string;
  cloneUrl: string;
  settings: ProjectSettings;
  createdAt: number;
  updatedAt: number;
};

const secretsSchema = z.object({
  webhookSecret: z.string(),
  forgeToken: z.string(),
  woodpeckerToken: z.string().optional(),
  actionSecrets: actionSecretsSchema.optional(),
});
export type ProjectSecrets = z.infer<typeof secretsSchema>;

export async function saveProject(env: Env, id: string, registration: ProjectRegistration): Promise<Project> {
  const {
    forge,
    apiUrl,
    repo,
    cloneUrl,
    webhookSecret,
    forgeToken,
    woodpeckerToken,
    actionSecrets,
    ...rest
  } = registration;
  const settings = settingsSchema.parse(rest);
  const key = await importSecretsKey(env.CONVEYOR_SECRETS_KEY);
  const secrets = await seal(
    key,
    id,
    JSON.stringify({ webhookSecret, forgeToken, woodpeckerToken, actionSecrets } satisfies ProjectSecrets),
  );
  const now = Date.now();
  const row = {
    id,
    forge,
    apiUrl: apiUrl.replace(/\/$/, ""),
    repo,
    cloneUrl: cloneUrl ?? defaultCloneUrl(forge, apiUrl, repo),
    defaultBranch: settings.defaultBranch,
    settings,
    secrets,
    createdAt: now,
    updatedAt: now,
  };
  const [saved] = await drizzle(env.DB)
    .insert(projects)
    .values(row)
    .onConflictDoUpdate({
      target: projects.id,
      set: { ...row, createdAt: undefined },
    })
    .returning();
  if (!saved) throw new Error(`project ${id} was not saved`);
  return toProject(saved);
}

export async function loadProject(env: Env, id: string): Promise<Project | null> {
  const row = await drizzle(env.DB).select().from(projects).where(eq(projects.id, id)).get();
  return row ? toProject(row) : null;
}

/** Replaces a registered project's settings (already validated); null when it is not registered. */
export async function saveSettings(env: Env, id: string, settings: ProjectSettings): Promise<Project | null> {
  const [saved] = await drizzle(env.DB)
    .update(projects)
    .set({ settings, defaultBranch: settings.defaultBranch, updatedAt: Date.now() })
    .where(eq(projects.id, id))
    .returning();
  return saved ? toProject(saved) : null;
}

export async function listProjects(env: Env): Promise<Project[]> {
  const rows = await drizzle(env.DB).select().from(projects).orderBy(projects.id).all();
  return rows.map(toProject);
}

export async function deleteProject(env: Env, id: string): Promise<boolean> {
  const deleted = await drizzle(env.DB)
    .delete(projects)
    .where(eq(projects.id, id))
    .returning({ id: projects.id });
  return deleted.length > 0;
}

export async function loadSecrets(env: Env, id: string): Promise<ProjectSecrets | null> {
  const row = await drizzle(env.DB)
    .select({ secrets: projects.secrets })
    .from(projects)
    .where(eq(projects.id, id))
    .get();
  return row ? openSecrets(env, id, row.secrets) : null;
}

/** A registered project; its secrets are opened on first use, so a caller that needs none opens none. */
export type Registered = { project: Project; secrets(): Promise<ProjectSecrets> };

/** The project and its sealed secrets from one read of its row. */
export async function loadRegistered(env: Env, id: string): Promise<Registered | null> {
  const row = await drizzle(env.DB).select().from(projects).where(eq(projects.id, id)).get();
  if (!row) return null;
  let opened: Promise<ProjectSecrets> | undefined;
  const secrets = () => {
    // A failed opening is not remembered.
    opened ??= openSecrets(env, id, row.secrets).catch((error: unknown) => {
      opened = undefined;
      throw error;
    });
    return opened;
  };
  return { project: toProject(row), secrets };
}

async function openSecrets(env: Env, id: string, sealed: string): Promise<ProjectSecrets> {
  const key = await importSecretsKey(env.CONVEYOR_SECRETS_KEY);
  return secretsSchema.parse(JSON.parse(await open(key, id, sealed)));
}

/** A client for the project's repository, or `repo` on the same forge with the project's token. */
export async function forgeClientFor(
  env: Env,
  project: Project,
  repo = project.repo,
  transport: ForgeTransport = {},
): Promise<ForgeClient> {
  const secrets = await loadSecrets(env, project.id);
  if (!secrets) throw new Error(`project ${project.id} is not registered`);
  return clientOf(env, project, secrets, repo, transport);
}

/** What a caller may add to a client's requests: conditional reads, a meter on the answers. */
export type ForgeTransport = Pick<ForgeClientOptions, "conditional" | "observe">;

/** A client with the project's token; its writes paced with every other writer of the token (`pacingOf`). */
export function clientOf(
  env: Env,
  project: Project,
  secrets: ProjectSecrets,
  repo = project.repo,
  transport: ForgeTransport = {},
): ForgeClient {
  const limits = pacingOf(project);
  return createForgeClient({
    forge: project.forge,
    apiUrl: project.apiUrl,
    repo,
    token: secrets.forgeToken,
    backoff: retriesOf(project),
    ...(limits && { pacer: tokenPacer(env, project.apiUrl, secrets.forgeToken, limits) }),
    ...transport,
  });
}

/** A request the forge failed (5xx, no answer) is sent again from the project's `effects.retryBaseMs`, doubling. */
const retriesOf = (project: Project): BackoffPolicy => ({
  ...DEFAULT_HTTP_BACKOFF,
  baseMs: project.settings.effects.retryBaseMs,
});

/** What reading a repository's files takes: a client that cannot write, so none to pace. */
export type FileReader = Pick<ForgeClient, "readDirectory" | "getBranchHead" | "fileIds">;

export const fileReaderOf = (project: Project, secrets: ProjectSecrets): FileReader =>
  createForgeClient({
    forge: project.forge,
    apiUrl: project.apiUrl,
    repo: project.repo,
    token: secrets.forgeToken,
    backoff: retriesOf(project),
  });

/** Lazily created clients, so a path that needs no forge call opens no secret. */
export function lazyForges(
  env: Env,
  project: Project,
  transport: ForgeTransport = {},
): (repo?: string) => Promise<ForgeClient> {
  const clients = new Map<string, Promise<ForgeClient>>();
  return (repo = project.repo) => {
    let client = clients.get(repo);
    if (!client) {
      client = forgeClientFor(env, project, repo, transport);
      clients.set(repo, client);
    }
    return client;
  };
}

function toProject(row: typeof projects.$inferSelect): Project {
  return {
    id: row.id,
    forge: row.forge,
    apiUrl: row.apiUrl,
    repo: row.repo,
    cloneUrl: row.cloneUrl,
    settings: settingsSchema.parse(row.settings),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
