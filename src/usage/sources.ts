/** What a usage record's spend was for: a runner's session, a model call the Worker made, an agent's run. */
export const USAGE_SOURCES = ["session", "critic", "classifier", "reviewer", "agent"] as const;
export type UsageSource = (typeof USAGE_SOURCES)[number];
