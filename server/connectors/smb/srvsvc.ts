/**
 * SRVSVC (MS-SRVS) over the `srvsvc` pipe: NetrShareEnum at level 1 (what `smbclient -L` and
 * Explorer list) and NetrShareGetInfo at level 502 (a share's security descriptor: who may
 * connect to it). The transport and its bounds are dcerpc.ts's.
 */
import type { RpcInterface, RpcPipe } from "./dcerpc";
import { NdrReader, NdrWriter } from "./ndr";

export const SRVSVC: RpcInterface = { name: "srvsvc", uuid: "4b324fc8-1670-01d3-1278-5a47bf6ee188", major: 3, minor: 0 };
const OPNUM_NETR_SHARE_ENUM = 15;
const OPNUM_NETR_SHARE_GET_INFO = 16;

export interface ShareInfo {
  name: string;
  /** STYPE_*: 0 disk, 1 printer, 2 device, 3 IPC; 0x80000000 marks admin shares. */
  type: number;
  comment: string;
}

export function netrShareEnumStub(serverName: string): NdrWriter {
  return new NdrWriter()
    .pointer() // ServerName: unique
    .wstring(`\\\\${serverName}`)
    .u32(1) // InfoStruct.Level
    .u32(1) // union discriminant
    .pointer() // SHARE_INFO_1_CONTAINER
    .u32(0) // EntriesRead
    .pointer(false) // Buffer: null, the server allocates
    .u32(0xffffffff) // PreferedMaximumLength: everything
    .pointer() // ResumeHandle: unique
    .u32(0);
}

function werrorCheck(r: NdrReader, call: string): void {
  const werror = r.u32();
  if (werror !== 0) throw new Error(`${call} failed: WERROR 0x${werror.toString(16)}`);
}

export function parseNetrShareEnum(stub: Buffer): ShareInfo[] {
  const r = new NdrReader(stub, "NetrShareEnum");
  const level = r.u32();
  r.u32(); // union discriminant
  if (level !== 1) throw new Error(`srvsvc: unexpected info level ${level}`);
  const containerPtr = r.u32();
  const shares: ShareInfo[] = [];
  if (containerPtr !== 0) {
    const count = r.u32();
    const arrayPtr = r.u32();
    if (arrayPtr !== 0) {
      const max = r.count();
      if (count > max) throw new Error(`srvsvc: ${count} entries in an array of ${max}`);
      const fixed: Array<{ namePtr: number; type: number; commentPtr: number }> = [];
      for (let i = 0; i < max; i++) fixed.push({ namePtr: r.u32(), type: r.u32(), commentPtr: r.u32() });
      // Pointed-to strings follow the array, in order, skipping null pointers.
      for (const f of fixed.slice(0, count)) {
        const name = f.namePtr ? r.wstring() : "";
        const comment = f.commentPtr ? r.wstring() : "";
        shares.push({ name, type: f.type, comment });
      }
    }
  }
  r.u32(); // TotalEntries
  if (r.u32() !== 0) r.u32(); // ResumeHandle
  werrorCheck(r, "NetrShareEnum");
  return shares;
}

export function listSharesOn(pipe: RpcPipe, serverName: string): Promise<ShareInfo[]> {
  return pipe.call(OPNUM_NETR_SHARE_ENUM, netrShareEnumStub(serverName)).then(parseNetrShareEnum);
}

export function netrShareGetInfoStub(serverName: string, share: string): NdrWriter {
  return new NdrWriter()
    .pointer() // ServerName: unique
    .wstring(`\\\\${serverName}`)
    .wstring(share) // NetName: [in, string] ref, no referent
    .u32(502);
}

/** The share's self-relative security descriptor from SHARE_INFO_502; null when it has none. */
export function parseNetrShareGetInfo502(stub: Buffer): Buffer | null {
  const r = new NdrReader(stub, "NetrShareGetInfo");
  const level = r.u32();
  if (level !== 502) throw new Error(`srvsvc: unexpected info level ${level}`);
  const infoPtr = r.u32();
  let descriptor: Buffer | null = null;
  if (infoPtr !== 0) {
    const netname = r.u32();
    r.u32(); // type
    const remark = r.u32();
    r.u32(); // permissions
    r.u32(); // max_uses
    r.u32(); // current_uses
    const path = r.u32();
    const passwd = r.u32();
    const sdLength = r.u32(); // shi502_reserved: the descriptor's length
    const sdPtr = r.u32();
    for (const p of [netname, remark, path, passwd]) if (p) r.wstring();
    if (sdPtr) {
      const n = r.count();
      if (n !== sdLength) throw new Error(`srvsvc: a share descriptor of ${n} bytes announced as ${sdLength}`);
      descriptor = Buffer.from(r.bytes(n));
    }
  }
  werrorCheck(r, "NetrShareGetInfo");
  return descriptor;
}

export function shareDescriptorOn(pipe: RpcPipe, serverName: string, share: string): Promise<Buffer | null> {
  return pipe.call(OPNUM_NETR_SHARE_GET_INFO, netrShareGetInfoStub(serverName, share)).then(parseNetrShareGetInfo502);
}
