import { createHashRouter, useParams } from "react-router";
import { Shell } from "./App";
import { requestHeadingFocus } from "./navigation";
import { AccountPage } from "./pages/AccountPage";
import { AskPage } from "./pages/AskPage";
import { AuditPage } from "./pages/AuditPage";
import { CollectionPage, CollectionsPage } from "./pages/CollectionsPage";
import { GroupsPage } from "./pages/GroupsPage";
import { InvitationsPage } from "./pages/InvitationsPage";
import { ModelsPage } from "./pages/ModelsPage";
import { PipelinesPage } from "./pages/PipelinesPage";
import { ShareBrowser, SourcesPage } from "./pages/SourcesPage";
import { WindowsAccountsPage } from "./pages/WindowsAccountsPage";

/** A route's `:name` parameter; the table below only mounts these where the path has it. */
function useParam(name: string): string {
  return useParams()[name] ?? "";
}

function CollectionRoute() {
  const id = useParam("collectionId");
  // A new id is a new screen: nothing of the last collection's state stays.
  return <CollectionPage key={id} collectionId={id} />;
}

function AskRoute() {
  const id = useParam("collectionId");
  return <AskPage key={id} collectionId={id} />;
}

function ShareBrowserRoute() {
  const id = useParam("sourceId");
  return <ShareBrowser key={id} sourceId={id} />;
}

function PipelineRoute() {
  return <PipelinesPage focusId={useParam("pipelineId")} />;
}

/** Every screen and its hash URL (#/collections, #/sources/<id>, ...); anything else shows the collections. */
export const router = createHashRouter([
  {
    path: "/",
    element: <Shell />,
    children: [
      { index: true, element: <CollectionsPage /> },
      { path: "collections", element: <CollectionsPage /> },
      { path: "collections/:collectionId", element: <CollectionRoute /> },
      { path: "collections/:collectionId/ask", element: <AskRoute /> },
      { path: "sources", element: <SourcesPage /> },
      { path: "sources/:sourceId", element: <ShareBrowserRoute /> },
      { path: "pipelines", element: <PipelineRoute /> },
      { path: "pipelines/:pipelineId", element: <PipelineRoute /> },
      { path: "groups", element: <GroupsPage /> },
      { path: "models", element: <ModelsPage /> },
      { path: "invitations", element: <InvitationsPage /> },
      { path: "account", element: <AccountPage /> },
      { path: "audit", element: <AuditPage /> },
      { path: "windows-accounts", element: <WindowsAccountsPage /> },
      { path: "*", element: <CollectionsPage /> },
    ],
  },
]);

// Subscribed before the app renders, so the flag is set before the new screen's effects run.
let shownLocation = router.state.location;
router.subscribe((state) => {
  if (state.location === shownLocation) return;
  shownLocation = state.location;
  requestHeadingFocus();
});
