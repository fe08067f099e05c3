/**
 * Links and the focus rule of navigation. Set by every navigation (routes.tsx: a route change,
 * signing in or out): the next page heading to mount or re-render takes focus, so keyboard and
 * screen-reader users start on the new screen instead of on <body>. The first load leaves focus
 * where the browser puts it.
 */
let headingFocusPending = false;

export function requestHeadingFocus(): void {
  headingFocusPending = true;
}

/** True once per navigation: the caller moves focus. */
export function takeHeadingFocus(): boolean {
  const pending = headingFocusPending;
  headingFocusPending = false;
  return pending;
}

/** A hash route's link (#/collections/abc): no server configuration needed, and reloads keep the screen. */
export function href(...parts: string[]): string {
  return `#/${parts.map(encodeURIComponent).join("/")}`;
}
