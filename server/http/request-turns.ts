import type { IncomingMessage, ServerResponse } from "node:http";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Started requests let go of at once while others still wait. */
const RELEASE_BLOCK = 1024;

/**
 * Requests started per turn of the event loop, at most. libuv accepts one new connection per turn
 * (libuv PR #3696, in 1.45 and later), and under load a turn that started every request that had
 * arrived (a hundred keep-alive clients) took 60 ms or more: a LAN's clients connecting at once
 * then waited seconds to be accepted (issue 20). A count, not a time budget: most of a request's
 * work runs after its first await (token check, database reads, the answer), in the same turn but
 * after the code that starts it, where no clock around that code can see it. Two per turn keeps a
 * turn to about a millisecond of work; a turn costs microseconds of its own.
 */
export const REQUESTS_PER_TURN = 2;

/**
 * The handler, with requests started in arrival order, `perTurn` per turn at most, the rest on
 * the next turns (setImmediate: the poll phase between them accepts a connection and reads what
 * arrived).
 */
export function requestsPerTurn(handler: Handler, perTurn = REQUESTS_PER_TURN): Handler {
  let waiting: Array<[IncomingMessage, ServerResponse]> = [];
  let next = 0;
  let scheduled = false;
  const startSome = () => {
    scheduled = false;
    const end = Math.min(waiting.length, next + perTurn);
    try {
      while (next < end) {
        const [req, res] = waiting[next++];
        handler(req, res);
      }
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
