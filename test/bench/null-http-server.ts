import { spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";

/**
 * A bare node:http server in a process of its own (null-http-server-child.ts), answering every
 * request with a fixed JSON body of `bytes`: timed with the same client beside each search, it
 * is what any HTTP request costs on this machine, so the floors' tail can be told apart from
 * Sluice's own (issue 36 item 1). Stopped by its process id.
 */
export interface NullHttpServer {
  url: string;
  stop(): Promise<void>;
}

export async function startNullHttpServer(bytes: number): Promise<NullHttpServer> {
  const child = spawn(process.execPath, [path.join(__dirname, "null-http-server-child.js"), String(bytes)], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once("line", (line) => resolve(Number(line)));
    child.once("exit", (code) => reject(new Error(`the null HTTP server exited (${code}) before it listened`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null) process.kill(child.pid!, "SIGTERM");
      await exited;
    },
  };
}
