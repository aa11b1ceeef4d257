/** One formula for the action tests: its file as the repository holds it, and as Conveyor parses it. */

export const ROTATE_TOKEN_MD = `---
name: rotate-token
version: 3
description: Rotate the deploy token
secrets: [DEPLOY_TOKEN]
steps:
  - id: rotate
    description: Revoke the old token
    command: ./rotate.sh
    dangerous: true
    secrets: [DEPLOY_TOKEN]
---
Be careful.
`;

export const ROTATE_TOKEN = {
  name: "rotate-token",
  version: "3",
  description: "Rotate the deploy token",
  inputs: [],
  network: [] as string[],
  secrets: ["DEPLOY_TOKEN"],
  steps: [
    {
      id: "rotate",
      description: "Revoke the old token",
      command: "./rotate.sh",
      dangerous: true,
      optional: false,
      secrets: ["DEPLOY_TOKEN"],
    },
  ],
};

/** The script the formula's step runs, as the default branch holds it. */
export const ROTATE_SH = "#!/bin/sh\necho rotated\n";
