import { useQuery } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState, type ReactNode } from "react";
import { useLocation } from "react-router";
import { errorMessage, queries } from "./api";
import { takeHeadingFocus } from "./navigation";

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

/** Moves focus to the current page's heading (or its main region): where a keyboard user lands when what they were on is gone. */
export function focusPageHeading(): void {
  const target = document.querySelector<HTMLElement>("#main h1") ?? document.getElementById("main");
  if (!target) return;
  if (!target.hasAttribute("tabindex")) target.tabIndex = -1;
  target.focus();
}

/**
 * The screen's `<title>` ("Groups · Sluice") and its heading: after a navigation (routes.tsx) the
 * heading takes focus. Returns the ref for the page's `<h1 tabIndex={-1}>`.
 */
export function usePageHeading(title: string) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Sluice`;
  }, [title]);
  const location = useLocation();
  useEffect(() => {
    // Runs on each new location (and on mount): the navigation's pending focus, if any, lands here.
    if (location && takeHeadingFocus()) ref.current?.focus();
  }, [location]);
  return ref;
}

/** The one polite live region: state changes ("Group created", "Pipeline finished"), never a stream of file names. */
let announceTo: ((message: string) => void) | null = null;

export function announce(message: string): void {
  announceTo?.(message);
}

export function LiveAnnouncer() {
  const [message, setMessage] = useState("");
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    announceTo = (next) => {
      // Cleared first, so the same sentence twice is still read twice.
      setMessage("");
      clearTimeout(timer);
      timer = setTimeout(() => setMessage(next), 60);
    };
    return () => {
      announceTo = null;
      clearTimeout(timer);
    };
  }, []);
  return (
    <div className="sr-only" role="status" aria-live="polite" aria-atomic="true" data-announcer="">
      {message}
    </div>
  );
}

/**
 * A modal confirmation: a real <dialog> (showModal traps focus and makes the page inert), opened
 * with focus on Cancel, closed by Escape; the caller returns focus.
 */
function ConfirmDialog({
  question,
  confirmLabel,
  onConfirm,
  onCancel,
}: {
  question: string;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const dialogRef = useRef<HTMLDialogElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const confirmed = useRef(false);
  const titleId = useId();
  useEffect(() => {
    const dialog = dialogRef.current;
    if (!dialog) return;
    if (!dialog.open) dialog.showModal();
    cancelRef.current?.focus();
    return () => {
      if (dialog.open) dialog.close();
    };
  }, []);
  return (
    <dialog
      ref={dialogRef}
      className="dialog"
      aria-modal="true"
      aria-labelledby={titleId}
      // Escape closes a modal <dialog> by itself; "close" also follows a confirm, which is not a cancel.
      onClose={() => {
        if (!confirmed.current) onCancel();
      }}
    >
      <p className="dialog-question" id={titleId}>
        {question}
      </p>
      <div className="dialog-actions">
        <button ref={cancelRef} type="button" onClick={onCancel}>
          Cancel
        </button>
        <button
          type="button"
          className="danger"
          onClick={() => {
            confirmed.current = true;
            onConfirm();
          }}
        >
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/** A delete button that asks first in a ConfirmDialog; focus comes back to it, or to the page heading once its item is gone. */
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
  const openerRef = useRef<HTMLButtonElement>(null);
  const close = () => {
    setAsking(false);
    setTimeout(() => openerRef.current?.focus(), 0);
  };
  useEffect(
    () => () => {
      // Unmounted (its item deleted): focus must not fall to <body>.
      setTimeout(() => {
        if (!document.activeElement || document.activeElement === document.body) focusPageHeading();
      }, 0);
    },
    [],
  );
  return (
    <>
      <button ref={openerRef} type="button" className="danger-outline" onClick={() => setAsking(true)} disabled={busy} aria-haspopup="dialog">
        {label}
      </button>
      {asking && (
        <ConfirmDialog
          question={question}
          confirmLabel={confirmLabel}
          onCancel={close}
          onConfirm={() => {
            close();
            onConfirm();
          }}
        />
      )}
    </>
  );
}

/** Whether the viewer can change the instance's settings (GET /instance); null until known, false when it cannot be asked. */
function useCanChangeSettings(): boolean | null {
  const instance = useQuery(queries.instance());
  if (instance.isError) return false;
  return instance.data?.can_change_settings ?? null;
}

/**
 * How a feature that is off gets turned on, told to the right person: the settings themselves to
 * the desktop user who can change them, and to anyone else whom to ask (never a variable they cannot set).
 */
export function AdminSettingNote({ feature, settings, readme }: { feature: string; settings: string[]; readme: string }) {
  const can = useCanChangeSettings();
  if (can === null) return null;
  if (!can)
    return (
      <p className="muted" data-admin-note="ask">
        {feature} is not set up on this Sluice server. Ask the person who runs it to turn it on.
      </p>
    );
  return (
    <p className="muted" data-admin-note="settings">
      {feature} is not set up on this computer. To turn it on, set{" "}
      {settings.map((name, i) => (
        <span key={name}>
          {i > 0 ? (i === settings.length - 1 ? " and " : ", ") : ""}
          <code>{name}</code>
        </span>
      ))}{" "}
      (environment variables, README: {readme}) and restart Sluice.
    </p>
  );
}

/**
 * A labelled form field; its problem (else its hint) under it, named by aria-describedby, and
 * aria-invalid while it has one. `alert`: the problem is announced as it appears, for a form that
 * has no summary of its errors to announce instead.
 */
export function Field({
  id,
  label,
  problem,
  hint,
  alert = false,
  children,
}: {
  id: string;
  label: string;
  problem?: string;
  hint?: string;
  alert?: boolean;
  children: (props: { id: string; "aria-invalid"?: true; "aria-describedby"?: string }) => ReactNode;
}) {
  const describedBy = problem || hint ? `${id}-note` : undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, "aria-invalid": problem ? true : undefined, "aria-describedby": describedBy })}
      {problem ? (
        <p className="field-error" id={describedBy} role={alert ? "alert" : undefined}>
          {problem}
        </p>
      ) : hint ? (
        <p className="hint" id={describedBy}>
          {hint}
        </p>
      ) : null}
    </div>
  );
}

/** Puts text on the clipboard: the Clipboard API where the page may use it, else (a LAN browser over http://) a selected text area. */
export async function copyText(text: string): Promise<boolean> {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // Refused (no permission, the page not focused): the older way below may still work.
    }
  }
  const back = document.activeElement as HTMLElement | null;
  const area = document.createElement("textarea");
  area.value = text;
  area.readOnly = true;
  area.className = "clipboard-buffer";
  document.body.append(area);
  area.select();
  let copied = false;
  try {
    copied = document.execCommand("copy");
  } catch {
    copied = false;
  }
  area.remove();
  back?.focus();
  return copied;
}
