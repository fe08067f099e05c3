import type { CatalogModel } from "./api";

// The catalog says what each model can do (from the model server's /api/show); models recorded
// before it did have `capabilities: null` and are offered everywhere rather than hidden.

/** A model that writes text: the Ask view's choices. */
export function writesText(model: Pick<CatalogModel, "capabilities">): boolean {
  return model.capabilities === null || model.capabilities.includes("completion");
}
