/** What main/ needs of the server's process: Electron's UtilityProcess and Node's ChildProcess both fit. */
/** The part of a readable stream we use: Node's Readable and Electron's stdout both have it. */
interface OutputStream {
  on(event: "data", listener: (chunk: Buffer | string) => void): unknown;
  off(event: "data", listener: (chunk: Buffer | string) => void): unknown;
}

export interface ServerChild {
  readonly pid?: number;
  readonly stdout: OutputStream | null;
  kill(): boolean;
  once(event: "exit", listener: (code: number | null) => void): unknown;
}

const LISTENING = /listening on (https?:\/\/\S+)/;

/** Resolves with the URL the server prints once it listens (README: Set up and run); rejects if it exits or takes too long. */
export function waitForListening(child: ServerChild, timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = "";
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      fn();
    };
    const onData = (chunk: Buffer | string) => {
      output += chunk.toString();
      const match = LISTENING.exec(output);
      if (match) settle(() => resolve(match[1]));
    };
    const timer = setTimeout(() => settle(() => reject(new Error(`The server did not start within ${timeoutMs / 1000} s`))), timeoutMs);
    child.stdout?.on("data", onData);
    child.once("exit", (code) => settle(() => reject(new Error(`The server stopped during start-up (exit code ${code})`))));
  });
}

/** Asks the server to stop (SIGTERM: it finishes or fails its job durably and closes the database) and waits. */
export function stopServer(child: ServerChild, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    if (!child.kill()) {
      clearTimeout(timer);
      resolve();
    }
  });
}
