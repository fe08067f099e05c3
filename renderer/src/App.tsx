import { useMutation, useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState, type KeyboardEvent, type MouseEvent, type ReactNode } from "react";
import { Outlet, useLocation } from "react-router";
import { DiskSpaceWarning } from "./DiskSpaceWarning";
import { client, keys, queries, queryClient, setUnauthorizedHandler } from "./api";
import { ErrorText, LiveAnnouncer, Loading, focusPageHeading } from "./components";
import { href } from "./navigation";
import { AuthPage } from "./pages/AuthPage";

const NAV: [string, string][] = [
  ["collections", "Collections"],
  ["sources", "Data sources"],
  ["pipelines", "Pipelines"],
  ["groups", "Groups"],
  ["models", "Models"],
];

/** Shown to the instance's administrators only. */
const ADMIN_NAV: [string, string] = ["invitations", "Invitations"];

/** The skip link moves focus to this page's main region; a plain href="#main" would be read as a route. */
function skipToMain(event: MouseEvent<HTMLAnchorElement>) {
  event.preventDefault();
  const main = document.getElementById("main");
  main?.focus();
  main?.scrollIntoView();
}

/** Signed out (a 401 anywhere, or Sign out): the sign-in screen replaces everything. */
const signedOut = () => queryClient.setQueryData(keys.me, null);

/** Signed in: nothing cached for the last account stays, then who this is is read again. */
function afterSignIn(): Promise<unknown> {
  queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== keys.me[0] });
  return queryClient.invalidateQueries({ queryKey: keys.me });
}

/** The frame of every screen: the sign-in screen, or the header, menu and the route's page (routes.tsx). */
export function Shell() {
  const me = useQuery(queries.me());
  const user = me.data;
  const [menuOpen, setMenuOpen] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  const location = useLocation();
  const section = location.pathname.split("/").filter(Boolean)[0] ?? "collections";

  useEffect(() => {
    setUnauthorizedHandler(signedOut);
    return () => setUnauthorizedHandler(null);
  }, []);

  // Administrators see the audit trail's link: a 403 on its first page says this account is not one.
  const audit = useQuery({ ...queries.audit(null), enabled: Boolean(user) });
  const signOut = useMutation({
    mutationFn: () => client.POST("/signout"),
    onSuccess: signedOut,
  });

  // Signing in or out replaces the whole screen: focus goes to the new screen's heading (not on the first load).
  const signedIn = user === undefined ? undefined : user !== null;
  const wasSignedIn = useRef<boolean | undefined>(undefined);
  useEffect(() => {
    if (wasSignedIn.current !== undefined && signedIn !== undefined && wasSignedIn.current !== signedIn) focusPageHeading();
    wasSignedIn.current = signedIn;
  }, [signedIn]);

  // A chosen link closes the narrow-screen menu: the menu's state belongs to the location it was opened on.
  const [menuLocation, setMenuLocation] = useState(location);
  if (menuLocation !== location) {
    setMenuLocation(location);
    setMenuOpen(false);
  }

  const closeMenuOnEscape = (event: KeyboardEvent) => {
    if (event.key === "Escape" && menuOpen) {
      setMenuOpen(false);
      menuButton.current?.focus();
    }
  };

  let content: ReactNode;
  if (user === undefined)
    content = (
      <main className="centered" id="main" tabIndex={-1}>
        <Loading />
      </main>
    );
  else if (user === null)
    content = (
<AuthPage onSignedIn={afterSignIn} />
    );
  else {
    content = (
      <>
        {/* biome-ignore lint/a11y/useValidAnchor: a skip link is a link to #main; the handler only keeps the hash route */}
        <a className="skip-link" href="#main" onClick={skipToMain}>
          Skip to content
        </a>
        {/* biome-ignore lint/a11y/noStaticElementInteractions: Escape bubbles up from the menu button and links inside */}
        <header className="topbar" onKeyDown={closeMenuOnEscape}>
          <a className="brand" href={href("collections")}>
            <span className="brand-mark" aria-hidden="true">
              ≋
            </span>{" "}
            Sluice
          </a>
          <button
            ref={menuButton}
            type="button"
            className="menu-button"
            aria-expanded={menuOpen}
            aria-controls="site-menu"
            onClick={() => setMenuOpen((open) => !open)}
          >
            <span aria-hidden="true">☰</span> Menu
          </button>
          <div id="site-menu" className={`site-menu${menuOpen ? " open" : ""}`}>
            <nav aria-label="Main">
              <ul>
                {(user.is_admin ? [...NAV, ADMIN_NAV] : NAV).map(([key, label]) => (
                  <li key={key}>
                    <a href={href(key)} aria-current={section === key ? "page" : undefined}>
                      {label}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
            <div className="whoami">
              <span className="user-email" title={`Signed in as ${user.email}`}>
                {user.display_name ? `${user.display_name} · ` : ""}
                {user.email}
              </span>
              <span className="account-links">
                <a href={href("windows-accounts")} aria-current={section === "windows-accounts" ? "page" : undefined}>
                  Windows accounts
                </a>
                <a href={href("account")} aria-current={section === "account" ? "page" : undefined}>
                  Account
                </a>
                {audit.isSuccess && (
                  <a href={href("audit")} aria-current={section === "audit" ? "page" : undefined}>
                    Audit trail
                  </a>
                )}
              </span>
              <button type="button" onClick={() => signOut.mutate()}>
                Sign out
              </button>
              <ErrorText error={signOut.error} />
            </div>
          </div>
        </header>
        <DiskSpaceWarning />
        <main id="main" tabIndex={-1}>
          <Outlet />
        </main>
      </>
    );
  }
  return (
    <>
      <LiveAnnouncer />
      {content}
    </>
  );
}
