import type { IncomingMessage, ServerResponse } from "node:http";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Started requests let go of at once while others still wait. */
const RELEASE_BLOCK = 1024;

/**
 * How long one turn of the event loop spends starting requests, at most (one is always started).
 * libuv accepts one new connection per turn (libuv PR #3696, in 1.45 and later), and under load
 * a turn that started every request that had arrived (a hundred keep-alive clients) took 60 ms
 * or more: a LAN's clients connecting at once then waited seconds to be accepted (issue 20).
 * Short turns take new connections between them, for the cost of an epoll call each.
 */
export const REQUEST_TURN_MS = 2;

/**
 * The handler, with requests started in arrival order for at most `turnMs` per turn, the rest
 * on the next turns (setImmediate: the poll phase between them accepts a connection and reads
 * what arrived). What a handler does after its first await is not counted: it runs when its
 * awaited work is done, as before.
 */
export function requestsPerTurn(handler: Handler, turnMs = REQUEST_TURN_MS, now: () => number = () => performance.now()): Handler {
  let waiting: Array<[IncomingMessage, ServerResponse]> = [];
  let next = 0;
  let scheduled = false;
  const startSome = () => {
    scheduled = false;
    const until = now() + turnMs;
    try {
      do {
        const [req, res] = waiting[next++];
        handler(req, res);
      } while (next < waiting.length && now() < until);
    } finally {
      // Started requests are let go of: at once when none wait, in a block under a load that never lets the queue empty.
      if (next === waiting.length) {
        waiting = [];
        next = 0;
      } else {
        if (next >= RELEASE_BLOCK) {
          waiting = waiting.slice(next);
          next = 0;
        }
        schedule();
      }
    }
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(startSome);
  };
  return (req, res) => {
    waiting.push([req, res]);
    schedule();
  };
}
