/**
 * The naming rules, in the words the forms, their validation messages and the README use
 * (README: "Names"). The server checks the same rules (server/http/groups.schemas.ts,
 * collections.schemas.ts) and answers a duplicate with its own message.
 */
export const GROUP_NAME_RULE = "3 to 50 letters, digits, underscores (_) or hyphens (-), not used by another group";
export const COLLECTION_NAME_RULE = "1 to 100 letters, digits or underscores (_), not used by another collection";

function problem(name: string, min: number, max: number, allowed: RegExp, rule: string): string | null {
  const bad = [...name].find((c) => !allowed.test(c));
  const why =
    name.length < min ? "Too short." : name.length > max ? "Too long." : bad === undefined ? null : bad === " " ? "Spaces are not allowed." : `“${bad}” is not allowed.`;
  return why && `${why} Use ${rule}.`;
}

export function groupNameProblem(name: string): string | null {
  return problem(name, 3, 50, /[A-Za-z0-9_-]/, GROUP_NAME_RULE);
}

export function collectionNameProblem(name: string): string | null {
  return problem(name, 1, 100, /[A-Za-z0-9_]/, COLLECTION_NAME_RULE);
}
