import type { Request, Response } from "express";

export interface EventStream {
  send(event: object): void;
  end(): void;
  /** Called once when the client goes away or the stream ends. */
  onClose(listener: () => void): void;
}

/**
 * Turns the response into a Server-Sent Events stream: one `data:` line per event,
 * written (and so flushed) at once, and a `: keep-alive` comment whenever the
 * stream has been quiet for keepAliveMs so proxies and clients do not time out.
 */
export function openEventStream(req: Request, res: Response, keepAliveMs: number): EventStream {
  res.status(200);
  res.setHeader("Content-Type", "text/event-stream; charset=utf-8");
  res.setHeader("Cache-Control", "no-store, no-transform");
  res.setHeader("Connection", "keep-alive");
  res.setHeader("X-Accel-Buffering", "no");
  res.flushHeaders();
  req.socket.setNoDelay(true);

  let lastWrite = Date.now();
  let open = true;
  const listeners: Array<() => void> = [];
  const timer = setInterval(() => {
    if (Date.now() - lastWrite >= keepAliveMs) write(": keep-alive\n\n");
  }, Math.max(5, Math.floor(keepAliveMs / 2)));
  timer.unref();

  function write(chunk: string): void {
    if (!open || res.writableEnded || res.destroyed) return;
    res.write(chunk);
    lastWrite = Date.now();
  }
  function close(): void {
    if (!open) return;
    open = false;
    clearInterval(timer);
    for (const listener of listeners.splice(0)) listener();
  }
  res.on("close", close);

  return {
    send: (event) => write(`data: ${JSON.stringify(event)}\n\n`),
    end: () => {
      close();
      if (!res.writableEnded) res.end();
    },
    onClose: (listener) => {
      if (open) listeners.push(listener);
      else listener();
    },
  };
}
