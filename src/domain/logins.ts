/** Forge logins compare without case on every supported forge. */
export const sameLogin = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
