import { useCallback, useEffect, useRef, useState, type KeyboardEvent, type MouseEvent, type ReactNode } from "react";
import { DiskSpaceWarning } from "./DiskSpaceWarning";
import * as api from "./api";
import { ErrorText, LiveAnnouncer, Loading, focusPageHeading } from "./components";
import { href, useRoute } from "./router";
import { AuthPage } from "./pages/AuthPage";
import { GroupsPage } from "./pages/GroupsPage";
import { SourcesPage, ShareBrowser } from "./pages/SourcesPage";
import { CollectionsPage, CollectionPage } from "./pages/CollectionsPage";
import { PipelinesPage } from "./pages/PipelinesPage";
import { ModelsPage } from "./pages/ModelsPage";
import { AskPage } from "./pages/AskPage";

const NAV: [string, string][] = [
  ["collections", "Collections"],
  ["sources", "Data sources"],
  ["pipelines", "Pipelines"],
  ["groups", "Groups"],
  ["models", "Models"],
];

/** The skip link moves focus to this page's main region; a plain href="#main" would be read as a route. */
function skipToMain(event: MouseEvent<HTMLAnchorElement>) {
  event.preventDefault();
  const main = document.getElementById("main");
  main?.focus();
  main?.scrollIntoView();
}

export function App() {
  const [user, setUser] = useState<api.User | null | undefined>(undefined);
  const [signOutError, setSignOutError] = useState<unknown>(null);
  const [menuOpen, setMenuOpen] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  const route = useRoute();

  const loadMe = useCallback(async () => {
    try {
      setUser(await api.me());
    } catch {
      setUser(null);
    }
  }, []);

  useEffect(() => {
    api.setUnauthorizedHandler(() => setUser(null));
    void loadMe();
    return () => api.setUnauthorizedHandler(null);
  }, [loadMe]);

  // Signing in or out replaces the whole screen: focus goes to the new screen's heading (not on the first load).
  const signedIn = user === undefined ? undefined : user !== null;
  const wasSignedIn = useRef<boolean | undefined>(undefined);
  useEffect(() => {
    if (wasSignedIn.current !== undefined && signedIn !== undefined && wasSignedIn.current !== signedIn) focusPageHeading();
    wasSignedIn.current = signedIn;
  }, [signedIn]);

  // A chosen link closes the narrow-screen menu.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the route is the trigger, not an input
  useEffect(() => setMenuOpen(false), [route.join("/")]);

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
<AuthPage onSignedIn={loadMe} />
    );
  else {
    const signOut = async () => {
      setSignOutError(null);
      try {
        await api.signOut();
        setUser(null);
      } catch (e) {
        setSignOutError(e);
      }
    };

    const section = route[0] ?? "collections";
    let page: ReactNode;
    if (section === "groups") page = <GroupsPage me={user} />;
    else if (section === "sources" && route[1]) page = <ShareBrowser sourceId={route[1]} />;
    else if (section === "sources") page = <SourcesPage />;
    else if (section === "pipelines") page = <PipelinesPage focusId={route[1]} />;
    else if (section === "models") page = <ModelsPage />;
    else if (section === "collections" && route[1] && route[2] === "ask") page = <AskPage collectionId={route[1]} />;
    else if (section === "collections" && route[1]) page = <CollectionPage collectionId={route[1]} />;
    else page = <CollectionsPage />;

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
                {NAV.map(([key, label]) => (
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
              <button type="button" onClick={signOut}>
                Sign out
              </button>
              <ErrorText error={signOutError} />
            </div>
          </div>
        </header>
        <DiskSpaceWarning />
        <main id="main" tabIndex={-1}>
          {page}
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
