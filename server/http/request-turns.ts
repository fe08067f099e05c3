import type { IncomingMessage, ServerResponse } from "node:http";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Requests started per turn of the event loop, at most. libuv accepts one new connection per
 * turn (libuv PR #3696, 1.45+), and under load a turn that starts every request that arrived
 * (a hundred keep-alive clients) takes 60 ms or more: a LAN's clients connecting at once then
 * waited seconds to be accepted (issue 20). Starting a few requests per turn keeps turns short,
 * so new connections are taken between them, and costs one short turn of latency.
 */
export const REQUESTS_PER_TURN = 8;

/**
 * The handler, with requests started in arrival order at most `perTurn` per turn (the rest on
 * the next turns, through setImmediate: the poll phase between them accepts a connection).
 */
export function requestsPerTurn(handler: Handler, perTurn = REQUESTS_PER_TURN): Handler {
  let waiting: Array<[IncomingMessage, ServerResponse]> = [];
  let next = 0;
  let scheduled = false;
  const startSome = () => {
    scheduled = false;
    const end = Math.min(waiting.length, next + perTurn);
    const batch = waiting.slice(next, end);
    next = end;
    if (next === waiting.length) {
      waiting = [];
      next = 0;
    } else schedule();
    for (const [req, res] of batch) handler(req, res);
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
