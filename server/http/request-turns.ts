import type { IncomingMessage, ServerResponse } from "node:http";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Started requests let go of at once while others still wait. */
const RELEASE_BLOCK = 1024;

/**
 * Requests started in a turn of the event loop that accepted a connection, at most. libuv accepts
 * one new connection per turn (libuv PR #3696, in 1.45 and later), and under load a turn that
 * starts every request that has arrived (a hundred keep-alive clients) takes 60 ms or more: a
 * LAN's clients connecting at once waited seconds to be accepted (issue 20). While connections
 * keep coming, short turns take them one after the other; a turn without one starts every
 * waiting request, as Node does, since short turns cost a third of the requests per second.
 * A count, not a time budget: most of a request's work runs after its first await, in the same
 * turn but after the code that starts it, where no clock around that code can see it.
 */
const REQUESTS_PER_CONNECTING_TURN = 2;

export interface RequestTurns {
  /** The 'request' listener. */
  request(req: IncomingMessage, res: ServerResponse): void;
  /** The 'connection' listener: a connection was accepted in this turn, more may be waiting. */
  connection(): void;
}

/**
 * Starts the handler's requests in arrival order from setImmediate, after the poll phase of the
 * turn they arrived in: all of them, or `perConnectingTurn` in a turn that accepted a connection
 * (the rest in the next turns).
 */
export function requestTurns(handler: Handler, perConnectingTurn = REQUESTS_PER_CONNECTING_TURN): RequestTurns {
  let waiting: Array<[IncomingMessage, ServerResponse]> = [];
  let next = 0;
  let scheduled = false;
  let connecting = false;
  const startSome = () => {
    scheduled = false;
    const end = connecting ? Math.min(waiting.length, next + perConnectingTurn) : waiting.length;
    connecting = false;
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
  return {
    request: (req, res) => {
      waiting.push([req, res]);
      schedule();
    },
    connection: () => {
      connecting = true;
    },
  };
}
