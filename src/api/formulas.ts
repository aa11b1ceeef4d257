/**
 * `GET /api/v1/projects/:project/formulas`: the action formulas on the project's default branch, each with
 * the secrets it declares that the project lacks (its `actionSecrets`), and the files that do not parse.
 * `conveyor project add` asks it after registering, so a missing secret is said before an action needs it.
 */
import { Hono } from "hono";
import type { Env } from "../env.ts";
import { errorMessage } from "../error-message.ts";
import { FORMULAS_DIR, formulaCatalog, lackedSecrets, MAX_FORMULA_FILES } from "../formulas/formula.ts";
import { projectIdSchema } from "../projects/config.ts";
import { fileReaderOf, loadRegistered } from "../projects/store.ts";
import { zodMessage } from "../validation.ts";
import { jsonError } from "./errors.ts";

export const formulaRoutes = new Hono<{ Bindings: Env }>();

formulaRoutes.get("/:project/formulas", async (c) => {
  const id = projectIdSchema.safeParse(c.req.param("project"));
  if (!id.success) return jsonError(c, 400, zodMessage(id.error));
  const registered = await loadRegistered(c.env, id.data);
  if (!registered) return jsonError(c, 404, `project ${id.data} is not registered`);
  const { project } = registered;
  const secrets = await registered.secrets();
  let files: Map<string, string>;
  try {
    const forge = fileReaderOf(project, secrets);
    files = await forge.readDirectory(FORMULAS_DIR, project.settings.defaultBranch, MAX_FORMULA_FILES);
  } catch (error) {
    return jsonError(c, 502, `cannot read the formulas from the repository: ${errorMessage(error)}`);
  }
  const { formulas, problems } = formulaCatalog(files);
  return c.json({
    formulas: formulas.map((formula) => ({
      name: formula.name,
      version: formula.version,
      description: formula.description,
      secrets: formula.secrets,
      missingSecrets: lackedSecrets(formula, secrets.actionSecrets),
    })),
    problems,
  });
});
