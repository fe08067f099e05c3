import { useMutation } from "@tanstack/react-query";
import { useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { client } from "../api";
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

export function AuthPage({ onSignedIn }: { onSignedIn: () => Promise<unknown> }) {
  const [mode, setMode] = useState<"signin" | "signup">("signin");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const account = useMutation({
    mutationFn: async () => {
      const body = { email: email.trim(), password };
      await (mode === "signup" ? client.POST("/signup", { body }) : client.POST("/signin", { body }));
    },
    onSuccess: onSignedIn,
  });
  const busy = account.isPending;
  const error = problem ?? account.error;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = mode === "signup" ? passwordProblem(password) : null;
    setProblem(found);
    account.reset();
    if (!found) account.mutate();
  };
  const setError = (value: null) => {
    setProblem(value);
    account.reset();
  };

  const title = mode === "signin" ? "Sign in" : "Create an account";
  const heading = usePageHeading(title);
  const tabRefs = { signin: useRef<HTMLButtonElement>(null), signup: useRef<HTMLButtonElement>(null) };
  const choose = (next: "signin" | "signup") => {
    setMode(next);
    setError(null);
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
  const tab = (key: "signin" | "signup", label: string) => (
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
        <form onSubmit={submit} noValidate>
          <div className="field">
            <label htmlFor="auth-email">Email</label>
            <input id="auth-email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
          </div>
          <div className="field">
            <label htmlFor="auth-password">Password</label>
            <input
              id="auth-password"
              type="password"
              autoComplete={mode === "signup" ? "new-password" : "current-password"}
              required
              value={password}
              aria-describedby={mode === "signup" ? "password-rule" : undefined}
              onChange={(e) => setPassword(e.target.value)}
            />
            {mode === "signup" && (
              <p className="hint" id="password-rule">
                {PASSWORD_WORDS}.
              </p>
            )}
          </div>
          <ErrorText error={error} />
          <button type="submit" className="primary wide" disabled={busy || !email || !password}>
            {busy ? "Please wait…" : mode === "signin" ? "Sign in" : "Sign up"}
          </button>
        </form>
        </div>
      </div>
    </main>
  );
}
