import { useCallback, useEffect, useState } from "react";
import { DiskSpaceWarning } from "./DiskSpaceWarning";
import * as api from "./api";
import { ErrorText, Loading } from "./components";
import { href, useRoute } from "./router";
import { AuthPage } from "./pages/AuthPage";
import { GroupsPage } from "./pages/GroupsPage";
import { SourcesPage, ShareBrowser } from "./pages/SourcesPage";
import { CollectionsPage, CollectionPage } from "./pages/CollectionsPage";
import { PipelinesPage } from "./pages/PipelinesPage";
import { ModelsPage } from "./pages/ModelsPage";

const NAV: [string, string][] = [
  ["collections", "Collections"],
  ["sources", "Data sources"],
  ["pipelines", "Pipelines"],
  ["groups", "Groups"],
  ["models", "Models"],
];

export function App() {
  const [user, setUser] = useState<api.User | null | undefined>(undefined);
  const [signOutError, setSignOutError] = useState<unknown>(null);
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

  if (user === undefined)
    return (
      <main className="centered">
        <Loading />
      </main>
    );
  if (user === null) return <AuthPage onSignedIn={loadMe} />;

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
  let page;
  if (section === "groups") page = <GroupsPage me={user} />;
  else if (section === "sources" && route[1]) page = <ShareBrowser sourceId={route[1]} />;
  else if (section === "sources") page = <SourcesPage />;
  else if (section === "pipelines") page = <PipelinesPage focusId={route[1]} />;
  else if (section === "models") page = <ModelsPage />;
  else if (section === "collections" && route[1]) page = <CollectionPage collectionId={route[1]} />;
  else page = <CollectionsPage />;

  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <a className="brand" href={href("collections")}>
          <span className="brand-mark" aria-hidden="true">≋</span> Sluice
        </a>
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
          <span className="user-email" title="Signed in as">
            {user.display_name ? `${user.display_name} · ` : ""}
            {user.email}
          </span>
          <button type="button" onClick={signOut}>
            Sign out
          </button>
          <ErrorText error={signOutError} />
        </div>
      </header>
      <DiskSpaceWarning />
      <main id="main" tabIndex={-1}>
        {page}
      </main>
    </>
  );
}
