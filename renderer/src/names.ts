/**
 * The naming rules, in the words the forms, their validation messages and the user guide use
 * (docs/user-guide.md: Names). The limits and allowed characters are the server's own, read from its
 * OpenAPI document at build time (generated/form-rules.ts, from the zod schemas in
 * server/http/groups.schemas.ts and collections.schemas.ts), so the two cannot drift; the
 * server answers a duplicate with its own message.
 */
import { formRules } from "./generated/form-rules";

interface TextRule {
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
}

/** One character the pattern `^[...]+$` allows, as a regular expression of its own. */
function allowedCharacter(rule: TextRule): RegExp {
  const match = /^\^(\[.+\])\+\$$/.exec(rule.pattern ?? "");
  if (!match) throw new Error(`a name rule's pattern must be ^[...]+$, not ${rule.pattern}`);
  return new RegExp(`^${match[1]}$`);
}

const GROUP_NAME = formRules["POST /user_groups"].group_name;
const COLLECTION_NAME = formRules["POST /collections"].name;

export const GROUP_NAME_RULE = `${GROUP_NAME.minLength} to ${GROUP_NAME.maxLength} letters, digits, underscores (_) or hyphens (-), not used by another group`;
export const COLLECTION_NAME_RULE = `${COLLECTION_NAME.minLength} to ${COLLECTION_NAME.maxLength} letters, digits or underscores (_), not used by another collection`;

function problem(name: string, rule: TextRule, words: string): string | null {
  const allowed = allowedCharacter(rule);
  const bad = [...name].find((c) => !allowed.test(c));
  const why =
    name.length < (rule.minLength ?? 0)
      ? "Too short."
      : name.length > (rule.maxLength ?? Number.POSITIVE_INFINITY)
        ? "Too long."
        : bad === undefined
          ? null
          : bad === " "
            ? "Spaces are not allowed."
            : `“${bad}” is not allowed.`;
  return why && `${why} Use ${words}.`;
}

export function groupNameProblem(name: string): string | null {
  return problem(name, GROUP_NAME, GROUP_NAME_RULE);
}

export function collectionNameProblem(name: string): string | null {
  return problem(name, COLLECTION_NAME, COLLECTION_NAME_RULE);
}

/** Source names (every kind): required, and at most this long. */
export const SOURCE_NAME_MAX = formRules["POST /data_sources/smb/{group_id}"]["data_source.data_source_name"].maxLength;

/** Passwords at sign-up: the server's length limits. */
export const PASSWORD_RULE = formRules["POST /signup"].password;

/** A schedule's interval: the server's fewest minutes between runs. */
export const MIN_EVERY_MINUTES = formRules["PUT /data_pipelines/{id}/schedule"].every_minutes.minimum;

/** The SMB form's server name (letters, digits, dots, hyphens) and port range. */
export const SMB_SERVER_NAME = new RegExp(formRules["POST /data_sources/smb/{group_id}"]["smb_source.remote_system_name"].pattern);
export const SMB_PORT = formRules["POST /data_sources/smb/{group_id}"]["smb_source.port"];
