import { useMutation, useQuery } from "@tanstack/react-query";
import { useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { useLocation, useNavigate, useSearchParams } from "react-router";
import * as api from "../api";
import { queries } from "../api";
import { ErrorText, usePageHeading } from "../components";
import { PASSWORD_RULE } from "../names";

const PASSWORD_WORDS = `${PASSWORD_RULE.minLength} to ${PASSWORD_RULE.maxLength} characters, with at least one letter and one digit`;

function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_RULE.minLength) return `Password must be at least ${PASSWORD_RULE.minLength} characters.`;
  if (password.length > PASSWORD_RULE.maxLength) return `Password must be at most ${PASSWORD_RULE.maxLength} characters.`;
  if (!/\p{L}/u.test(password)) return "Password must contain at least one letter.";
  if (!/\p{Nd}/u.test(password)) return "Password must contain at least one digit.";
  return null;
}

type Mode = "signin" | "signup";

/**
 * Where a failed sign-up or sign-in is shown: under the field it concerns (a field error, an
 * address that may not sign up or is taken), else under the form (wrong password, a used link).
 */
function placeError(error: unknown, mode: Mode): { email?: string; password?: string; form?: unknown } {
  if (!(error instanceof api.ApiError)) return { form: error };
  const under: { email?: string; password?: string; form?: unknown } = {};
  for (const e of error.errors) {
    const text = `${api.fieldLabel(e.field)} ${e.message.replace(/\.$/, "")}.`;
    if (e.field === "email") under.email = text;
    else if (e.field === "password") under.password = text;
    else under.form = text;
  }
  if (error.errors.length) return under;
  if (mode === "signup" && (error.status === 403 || error.status === 409)) return { email: error.detail };
  return { form: error };
}

/** What the sign-up tab says before anyone types: the instance's rule, said once. */
function signupNote(status: api.SignupStatus | undefined, invited: boolean): string | null {
  if (!status || invited) return null;
  if (status.first_account) return "Nobody has signed up yet: the first account becomes this instance's administrator.";
  if (status.signup === "invite") return "Sign-up here is by invitation: open the link an administrator sent you.";
  if (status.signup === "off") return "Sign-up is closed on this instance: its administrator can make you an account.";
  return null;
}

export function AuthPage({ onSignedIn }: { onSignedIn: () => Promise<unknown> }) {
  const location = useLocation();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const invitation = location.pathname === "/signup" ? params.get("invitation") : null;
  const status = useQuery(queries.signup(invitation));
  const invited = status.data?.invitation ?? null;
  const [mode, setMode] = useState<Mode>(location.pathname === "/signup" ? "signup" : "signin");
  const [typedEmail, setEmail] = useState("");
  const email = mode === "signup" && invited ? invited.email : typedEmail;
  const [password, setPassword] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const account = useMutation({
    mutationFn: async () => {
      const body = { email: email.trim(), password };
      if (mode === "signup") await api.answer(api.client.POST("/signup", { body: invitation ? { ...body, invitation } : body }));
      else await api.answer(api.client.POST("/signin", { body }));
    },
    onSuccess: async () => {
      // The invitation link has done its work: signed in, the app opens on its first screen.
      if (invitation) await navigate("/", { replace: true });
      return onSignedIn();
    },
  });
  const busy = account.isPending;
  const placed = placeError(account.error, mode);
  const passwordError = problem ?? placed.password;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = mode === "signup" ? passwordProblem(password) : null;
    setProblem(found);
    account.reset();
    if (!found) account.mutate();
  };

  const title = mode === "signin" ? "Sign in" : "Create an account";
  const heading = usePageHeading(title);
  const tabRefs = { signin: useRef<HTMLButtonElement>(null), signup: useRef<HTMLButtonElement>(null) };
  const choose = (next: Mode) => {
    setMode(next);
    setProblem(null);
    account.reset();
  };
  // The ARIA tabs pattern: arrow keys (and Home/End) move between the tabs and select them; Tab leaves the tab list.
  const onTabKey = (event: KeyboardEvent) => {
    const order = ["signin", "signup"] as const;
    const at = order.indexOf(mode);
    const next =
      event.key === "ArrowRight" ? order[(at + 1) % 2] : event.key === "ArrowLeft" ? order[(at + 1) % 2] : event.key === "Home" ? order[0] : event.key === "End" ? order[1] : null;
    if (!next) return;
    event.preventDefault();
    choose(next);
    tabRefs[next].current?.focus();
  };
  const tab = (key: Mode, label: string) => (
    <button
      ref={tabRefs[key]}
      type="button"
      role="tab"
      id={`tab-${key}`}
      aria-controls="auth-panel"
      aria-selected={mode === key}
      tabIndex={mode === key ? 0 : -1}
      onClick={() => choose(key)}
    >
      {label}
    </button>
  );
  const note = mode === "signup" ? signupNote(status.data, invited !== null) : null;
  const emailNote = placed.email ? "auth-email-error" : mode === "signup" && invited ? "auth-email-invited" : undefined;
  return (
    <main className="centered" id="main" tabIndex={-1}>
      <div className="card auth-card">
        <h1 className="brand-title" ref={heading} tabIndex={-1}>
          <span className="brand-mark" aria-hidden="true">≋</span> Sluice
        </h1>
        <p className="muted">Documents from your shares, searchable in one place.</p>
        <div className="tabs" role="tablist" aria-label="Account" onKeyDown={onTabKey}>
          {tab("signin", "Sign in")}
          {tab("signup", "Sign up")}
        </div>
        <div id="auth-panel" role="tabpanel" aria-labelledby={`tab-${mode}`}>
          {mode === "signup" && invitation && status.error ? <ErrorText error={status.error} id="invitation-error" /> : null}
          {note && (
            <p className="muted" id="signup-note">
              {note}
            </p>
          )}
          <form onSubmit={submit} noValidate>
            <div className="field">
              <label htmlFor="auth-email">Email</label>
              <input
                id="auth-email"
                type="email"
                autoComplete="email"
                required
                value={email}
                readOnly={mode === "signup" && invited !== null}
                aria-invalid={placed.email ? true : undefined}
                aria-describedby={emailNote}
                onChange={(e) => setEmail(e.target.value)}
              />
              {placed.email ? (
                <p className="field-error" id="auth-email-error" role="alert">
                  {placed.email}
                </p>
              ) : mode === "signup" && invited ? (
                <p className="hint" id="auth-email-invited">
                  The invitation is for this address.
                </p>
              ) : null}
            </div>
            <div className="field">
              <label htmlFor="auth-password">Password</label>
              <input
                id="auth-password"
                type="password"
                autoComplete={mode === "signup" ? "new-password" : "current-password"}
                required
                value={password}
                aria-invalid={passwordError ? true : undefined}
                aria-describedby={mode === "signup" || passwordError ? "password-rule" : undefined}
                onChange={(e) => setPassword(e.target.value)}
              />
              {passwordError ? (
                <p className="field-error" id="password-rule" role="alert">
                  {passwordError}
                </p>
              ) : (
                mode === "signup" && (
                  <p className="hint" id="password-rule">
                    {PASSWORD_WORDS}.
                  </p>
                )
              )}
            </div>
            <ErrorText error={placed.form} />
            <button type="submit" className="primary wide" disabled={busy || !email || !password}>
              {busy ? "Please wait…" : mode === "signin" ? "Sign in" : "Sign up"}
            </button>
          </form>
        </div>
      </div>
    </main>
  );
}
