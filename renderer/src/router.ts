import { useEffect, useState } from "react";

/**
 * Set by every navigation (a hash change, signing in or out): the next page heading to mount
 * or re-render takes focus, so keyboard and screen-reader users start on the new screen
 * instead of on <body>. The first load leaves focus where the browser puts it.
 */
let headingFocusPending = false;
let navigations = 0;

export function requestHeadingFocus(): void {
  headingFocusPending = true;
  navigations++;
}

/** True once per navigation: the caller moves focus. */
export function takeHeadingFocus(): boolean {
  const pending = headingFocusPending;
  headingFocusPending = false;
  return pending;
}

/** Changes with every navigation, for effects that must re-run when the same page shows a new route. */
export function navigationCount(): number {
  return navigations;
}

/** Hash routes (#/collections/abc): no server configuration needed, and reloads keep the screen. */
const read = () => window.location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);

export function useRoute(): string[] {
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = () => {
      requestHeadingFocus();
      setRoute(read());
    };
    window.addEventListener("hashchange", onChange);
    return () => window.removeEventListener("hashchange", onChange);
  }, []);
  return route;
}

export function href(...parts: string[]): string {
  return `#/${parts.map(encodeURIComponent).join("/")}`;
}

export function navigate(...parts: string[]): void {
  window.location.hash = href(...parts).slice(1);
}
