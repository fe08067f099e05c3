/** NTSTATUS answers of the LSA and SAMR calls. */

export const NtStatus = {
  SUCCESS: 0,
  SOME_NOT_MAPPED: 0x00000107,
  ACCESS_DENIED: 0xc0000022,
  NONE_MAPPED: 0xc0000073,
  NO_SUCH_USER: 0xc0000064,
} as const;

/** A call the server refused: its name and NTSTATUS. */
export class RpcCallError extends Error {
  constructor(
    readonly call: string,
    readonly status: number,
  ) {
    super(`${call} failed: NTSTATUS 0x${status.toString(16).padStart(8, "0")}`);
    this.name = "RpcCallError";
  }
}

export function checkStatus(call: string, status: number, ...allowed: number[]): number {
  if (status !== NtStatus.SUCCESS && !allowed.includes(status)) throw new RpcCallError(call, status);
  return status;
}
