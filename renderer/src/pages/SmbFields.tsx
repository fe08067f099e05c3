import { Field } from "../components";
import { SMB_PORT, SMB_SERVER_NAME } from "../names";

/**
 * The fields of an SMB source, as the Data sources page and the first run both ask them: one set
 * of labels, hints, checks and failure places, so the two forms cannot drift apart.
 */
export type SmbValues = { server: string; ip: string; port: string; user: string; password: string; workstation: string };
export type SmbProblems = Partial<Record<keyof SmbValues, string>>;

export const NEW_SMB_VALUES: SmbValues = { server: "", ip: "", port: "445", user: "", password: "", workstation: "" };

export const SMB_FIELD_LABELS: Record<keyof SmbValues, string> = {
  server: "Server name",
  ip: "IP address",
  port: "Port",
  user: "User name",
  password: "Password",
  workstation: "Workstation",
};

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6 = /^[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*$/;

/** What to fix before sending: the checks the server would make, said under each field. */
export function smbProblems(v: SmbValues): SmbProblems {
  const problems: SmbProblems = {};
  if (!v.server) problems.server = "Enter the file server's host name.";
  else if (!SMB_SERVER_NAME.test(v.server)) problems.server = "A host name has only letters, digits, dots and hyphens.";
  if (v.ip && !IPV4.test(v.ip) && !IPV6.test(v.ip)) problems.ip = "Enter an IPv4 or IPv6 address, or leave empty.";
  const port = Number(v.port);
  if (!/^\d+$/.test(v.port) || port < SMB_PORT.minimum || port > SMB_PORT.maximum) problems.port = `Port is a number from ${SMB_PORT.minimum} to ${SMB_PORT.maximum}.`;
  if (!v.user) problems.user = "Enter the user name for the share.";
  return problems;
}

/**
 * The field an SMB check failure concerns (the API's `reason`), so its hint sits where the fix is;
 * share and security reasons have no field of their own and stay a note under the form.
 */
export function smbFailureField(reason: string, v: SmbValues): keyof SmbValues | null {
  switch (reason) {
    case "logon_failure":
      return "password";
    case "host_not_found":
      return "server";
    case "connection_refused":
      return "port";
    case "timed_out":
      return v.ip ? "ip" : "server";
    default:
      return null;
  }
}

/** The request's `smb_source` from what was entered. */
export function smbSourceBody(v: SmbValues, sourcePermissions = false) {
  return {
    remote_system_username: v.user,
    remote_smb_password: v.password,
    remote_system_name: v.server,
    local_system_name: v.workstation,
    default_ip: v.ip || null,
    port: Number(v.port),
    source_permissions: sourcePermissions,
  };
}

export function SmbFields({
  idPrefix,
  values,
  problems,
  onChange,
  workstation = true,
  alert = false,
}: {
  /** Each field's id is `${idPrefix}-server`, `${idPrefix}-port`, ...; its note `...-note`. */
  idPrefix: string;
  values: SmbValues;
  problems: SmbProblems;
  onChange: (key: keyof SmbValues, value: string) => void;
  /** The workstation name is rarely needed: the first run leaves it out to stay short. */
  workstation?: boolean;
  /** Announce each problem as it appears (a form with no summary of its errors). */
  alert?: boolean;
}) {
  const set = (key: keyof SmbValues) => (e: { target: { value: string } }) => onChange(key, e.target.value);
  const id = (key: keyof SmbValues) => `${idPrefix}-${key}`;
  return (
    <>
      <Field id={id("server")} label={SMB_FIELD_LABELS.server} problem={problems.server} alert={alert} hint="Host name of the file server, e.g. fileserver01">
        {(p) => <input {...p} value={values.server} onChange={set("server")} autoComplete="off" spellCheck={false} />}
      </Field>
      <Field id={id("ip")} label={`${SMB_FIELD_LABELS.ip} (optional)`} problem={problems.ip} alert={alert}>
        {(p) => <input {...p} value={values.ip} onChange={set("ip")} inputMode="decimal" placeholder="192.168.1.20" spellCheck={false} />}
      </Field>
      <Field id={id("port")} label={SMB_FIELD_LABELS.port} problem={problems.port} alert={alert}>
        {(p) => <input {...p} value={values.port} onChange={set("port")} inputMode="numeric" />}
      </Field>
      <Field
        id={id("user")}
        label={SMB_FIELD_LABELS.user}
        problem={problems.user}
        alert={alert}
        hint="As you sign in to Windows: DOMAIN\user, user@domain, or just user (the server's own domain)"
      >
        {(p) => <input {...p} value={values.user} onChange={set("user")} autoComplete="off" spellCheck={false} />}
      </Field>
      <Field id={id("password")} label={SMB_FIELD_LABELS.password} problem={problems.password} alert={alert}>
        {(p) => <input {...p} type="password" value={values.password} onChange={set("password")} autoComplete="new-password" />}
      </Field>
      {workstation && (
        <Field id={id("workstation")} label={`${SMB_FIELD_LABELS.workstation} (optional)`} problem={problems.workstation} alert={alert} hint="The name this computer gives the server">
          {(p) => <input {...p} value={values.workstation} onChange={set("workstation")} spellCheck={false} />}
        </Field>
      )}
    </>
  );
}
