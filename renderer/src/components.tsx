import { useCallback, useEffect, useRef, useState, type ReactNode } from "react";
import { errorMessage } from "./api";

/** An API error shown next to the action that caused it; announced to screen readers. */
export function ErrorText({ error, id }: { error: unknown; id?: string }) {
  if (error === null || error === undefined || error === "") return null;
  return (
    <p className="error" role="alert" id={id}>
      {typeof error === "string" ? error : errorMessage(error)}
    </p>
  );
}

export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <p className="muted" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> {label}
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

/** A determinate bar for a number, an indeterminate one for null. */
export function ProgressBar({ value, label }: { value: number | null; label: string }) {
  const indeterminate = value === null;
  return (
    <div
      className={`progress${indeterminate ? " indeterminate" : ""}`}
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={indeterminate ? undefined : value}
      aria-valuetext={indeterminate ? "Counting files…" : `${value.toFixed(1)}%`}
    >
      <div className="progress-fill" style={indeterminate ? undefined : { width: `${Math.min(100, Math.max(0, value))}%` }} />
    </div>
  );
}

/** Loads data once (and on reload()), tracking loading and error. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const counter = useRef(0);
  const reload = useCallback(async () => {
    const ticket = ++counter.current;
    setLoading(true);
    try {
      const value = await load();
      if (ticket === counter.current) {
        setData(value);
        setError(null);
      }
    } catch (e) {
      if (ticket === counter.current) setError(e);
    } finally {
      if (ticket === counter.current) setLoading(false);
    }
  }, deps);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data, error, loading, reload, setData };
}

/** Runs an action, tracking busy and the error to show next to its button. */
export function useAction<A extends unknown[]>(action: (...args: A) => Promise<unknown>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async (...args: A): Promise<boolean> => {
    setBusy(true);
    setError(null);
    try {
      await action(...args);
      return true;
    } catch (e) {
      setError(e);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error, setError };
}

/** A delete button that asks first, in place (no window.confirm, so it stays keyboard- and test-friendly). */
export function ConfirmButton({
  label,
  confirmLabel = "Yes, delete",
  question,
  onConfirm,
  busy,
}: {
  label: string;
  confirmLabel?: string;
  question: string;
  onConfirm: () => void;
  busy?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const yesRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) yesRef.current?.focus();
  }, [asking]);
  if (!asking)
    return (
      <button type="button" className="danger-outline" onClick={() => setAsking(true)} disabled={busy}>
        {label}
      </button>
    );
  return (
    <span className="confirm" role="group" aria-label={question}>
      <span>{question}</span>
      <button
        ref={yesRef}
        type="button"
        className="danger"
        disabled={busy}
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return "—";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

/** Server timestamps are UTC without a zone offset. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(iso) ? iso : `${iso}Z`);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}
