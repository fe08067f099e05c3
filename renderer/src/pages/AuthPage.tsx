import { useState, type FormEvent } from "react";
import * as api from "../api";
import { ErrorText } from "../components";

const PASSWORD_RULE = "8 to 100 characters, with at least one letter and one digit";

function passwordProblem(password: string): string | null {
  if (password.length < 8) return "Password must be at least 8 characters.";
  if (password.length > 100) return "Password must be at most 100 characters.";
  if (!/\p{L}/u.test(password)) return "Password must contain at least one letter.";
  if (!/\p{Nd}/u.test(password)) return "Password must contain at least one digit.";
  return null;
}

export function AuthPage({ onSignedIn }: { onSignedIn: () => void }) {
  const [mode, setMode] = useState<"signin" | "signup">("signin");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    if (mode === "signup") {
      const problem = passwordProblem(password);
      if (problem) return setError(problem);
    }
    setBusy(true);
    try {
      if (mode === "signup") await api.signUp(email.trim(), password);
      else await api.signIn(email.trim(), password);
      onSignedIn();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const title = mode === "signin" ? "Sign in" : "Create an account";
  return (
    <main className="centered" id="main">
      <div className="card auth-card">
        <h1 className="brand-title">
          <span className="brand-mark" aria-hidden="true">≋</span> Sluice
        </h1>
        <p className="muted">Documents from your shares, searchable in one place.</p>
        <div className="tabs" role="tablist" aria-label="Account">
          <button type="button" role="tab" id="tab-signin" aria-controls="auth-panel" aria-selected={mode === "signin"} onClick={() => (setMode("signin"), setError(null))}>
            Sign in
          </button>
          <button type="button" role="tab" id="tab-signup" aria-controls="auth-panel" aria-selected={mode === "signup"} onClick={() => (setMode("signup"), setError(null))}>
            Sign up
          </button>
        </div>
        <form onSubmit={submit} aria-label={title} noValidate id="auth-panel" role="tabpanel">
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
                {PASSWORD_RULE}.
              </p>
            )}
          </div>
          <ErrorText error={error} />
          <button type="submit" className="primary wide" disabled={busy || !email || !password}>
            {busy ? "Please wait…" : mode === "signin" ? "Sign in" : "Sign up"}
          </button>
        </form>
      </div>
    </main>
  );
}
