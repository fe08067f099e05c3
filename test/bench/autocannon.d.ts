// The part of autocannon's API the load benchmark uses (the package ships no types).
declare module "autocannon" {
  interface Options {
    url: string;
    connections: number;
    /** Seconds. */
    duration: number;
    /** Seconds before a request counts as a timeout error. */
    timeout: number;
    headers: Record<string, string>;
    /** Each connection sends these in turn. */
    requests: Array<{ method: string; path: string }>;
  }
  interface Result {
    /** Seconds the run lasted. */
    duration: number;
    errors: number;
    timeouts: number;
  }
  interface Instance extends PromiseLike<Result> {
    /** Each answered request: its connection (whose request index names the request), status, bytes and latency in ms. */
    on(event: "response", listener: (client: { requestIterator: { currentRequestIndex: number } }, status: number, bytes: number, ms: number) => void): this;
  }
  function autocannon(options: Options): Instance;
  export default autocannon;
}
