import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

const root = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  root,
  base: "/",
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true },
  // `npx vite renderer` during development: the API runs separately on its default port.
  server: { proxy: { "/api": "http://127.0.0.1:8420" } },
});
