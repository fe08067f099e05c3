import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DceRpcError, DceRpcFault, ReplyAssembler, RpcPipe, type PipeTransport } from "../../server/connectors/smb/dcerpc";
import { NdrError, NdrReader, NdrWriter, sidBytes, sidString } from "../../server/connectors/smb/ndr";
import { SecurityDescriptorError, parseSecurityDescriptor } from "../../server/connectors/smb/security-descriptor";
import { parseNetrShareGetInfo502 } from "../../server/connectors/smb/srvsvc";

/**
 * DCE/RPC, NDR and security descriptors on bytes a hostile server could send: every bound holds
 * and every malformed input fails with a clear error at once (a real Samba never sends these).
 */

const IFACE = { name: "test", uuid: "12345778-1234-abcd-ef00-0123456789ab", major: 0, minor: 0 };

/** A response (or other) PDU: version 5, the flags, the fragment length as given, call id, then the body. */
function pdu(opts: { ptype?: number; flags?: number; fragLength?: number; callId?: number; stub?: Buffer }): Buffer {
  const stub = opts.stub ?? Buffer.alloc(0);
  const b = Buffer.alloc(24 + stub.length);
  b.writeUInt8(5, 0);
  b.writeUInt8(opts.ptype ?? 2, 2);
  b.writeUInt8(opts.flags ?? 0x03, 3);
  b.writeUInt32BE(0x10000000, 4);
  b.writeUInt16LE(opts.fragLength ?? b.length, 8);
  b.writeUInt32LE(opts.callId ?? 2, 12);
  stub.copy(b, 24);
  return b;
}

function bindAck(): Buffer {
  const b = Buffer.alloc(60);
  b.writeUInt8(5, 0);
  b.writeUInt8(12, 2);
  b.writeUInt8(0x03, 3);
  b.writeUInt16LE(b.length, 8);
  b.writeUInt32LE(1, 12);
  b.writeUInt16LE(4280, 16);
  b.writeUInt16LE(4280, 18);
  b.writeUInt16LE(0, 24); // no secondary address
  b.writeUInt8(1, 28); // one result: accepted
  return b;
}

/** A pipe that answers the bind, then whatever `reply` and `reads` say. */
function pipeOf(reply: Buffer, reads: () => Buffer = () => Buffer.alloc(0)) {
  let readsDone = 0;
  const transport: PipeTransport = {
    transceive: async (request) => (request.readUInt8(2) === 11 ? bindAck() : reply),
    read: async () => {
      readsDone++;
      return reads();
    },
  };
  return { transport, reads: () => readsDone };
}

describe("DCE/RPC replies", () => {
  it("reassembles a reply in fragments over several pipe reads", async () => {
    const first = pdu({ flags: 0x01, stub: Buffer.from("hello ") });
    const last = pdu({ flags: 0x02, stub: Buffer.from("world") });
    const bytes = Buffer.concat([first, last]);
    const chunks = [bytes.subarray(10, 40), bytes.subarray(40)];
    const { transport } = pipeOf(bytes.subarray(0, 10), () => chunks.shift() ?? Buffer.alloc(0));
    const pipe = new RpcPipe(transport, IFACE);
    await pipe.bind();
    assert.equal((await pipe.call(1, Buffer.alloc(4))).toString(), "hello world");
  });

  it("a fragment length of zero (below the 16-byte header) fails at once", () => {
    assert.throws(() => new ReplyAssembler("test", 2).push(pdu({ fragLength: 0 })), (e: unknown) => e instanceof DceRpcError && /fragment length of 0, shorter than the 16-byte header/.test(e.message));
    assert.throws(() => new ReplyAssembler("test", 2).push(pdu({ fragLength: 20 })), /too short for its headers/);
  });

  it("a reply over the cap fails before more is read", async () => {
    const endless = () => pdu({ flags: 0x00, stub: Buffer.alloc(1000) });
    const { transport, reads } = pipeOf(endless(), endless);
    const pipe = new RpcPipe(transport, IFACE, { maxReplyBytes: 10_000 });
    await pipe.bind();
    await assert.rejects(pipe.call(1, Buffer.alloc(4)), (e: unknown) => e instanceof DceRpcError && /over 10000 bytes; abandoned/.test(e.message));
    assert.ok(reads() <= 10, `${reads()} reads`);
  });

  it("pipe reads are capped, and an empty read in the middle of a reply is an error", async () => {
    const dribble = () => pdu({ flags: 0x00, stub: Buffer.alloc(0) });
    const capped = pipeOf(dribble(), dribble);
    const pipe = new RpcPipe(capped.transport, IFACE, { maxPipeReads: 50 });
    await pipe.bind();
    await assert.rejects(pipe.call(1, Buffer.alloc(4)), /no complete reply after 50 pipe reads/);
    assert.equal(capped.reads(), 50);
    const empty = pipeOf(pdu({ flags: 0x00, stub: Buffer.alloc(8) }));
    const pipe2 = new RpcPipe(empty.transport, IFACE);
    await pipe2.bind();
    await assert.rejects(pipe2.call(1, Buffer.alloc(4)), /empty read in the middle of a reply/);
  });

  it("a fault PDU, another call's reply and an unexpected PDU type are errors", () => {
    const fault = pdu({ ptype: 3, stub: Buffer.from([0x02, 0x00, 0x01, 0x1c]) });
    assert.throws(() => new ReplyAssembler("test", 2).push(fault), (e: unknown) => e instanceof DceRpcFault && e.status === 0x1c010002);
    assert.throws(() => new ReplyAssembler("test", 2).push(pdu({ callId: 9 })), /a reply for another call/);
    assert.throws(() => new ReplyAssembler("test", 2).push(pdu({ ptype: 12 })), /unexpected PDU type 12/);
  });

  it("a request larger than one fragment is refused before anything is sent", async () => {
    const { transport } = pipeOf(pdu({}));
    const pipe = new RpcPipe(transport, IFACE);
    await pipe.bind();
    await assert.rejects(pipe.call(1, Buffer.alloc(5000)), /does not fit one fragment/);
  });
});

describe("NDR", () => {
  it("SIDs round-trip", () => {
    for (const sid of ["S-1-1-0", "S-1-5-32-545", "S-1-5-21-748417371-3930066580-564602492-1000"]) assert.equal(sidString(sidBytes(sid), 0).sid, sid);
    assert.throws(() => sidBytes("S-1-5-x"), NdrError);
  });

  it("a reply that ends early, a huge array or a string longer than its maximum is an NdrError", () => {
    assert.throws(() => new NdrReader(Buffer.alloc(3), "x").u32(), /ends 1 bytes early/);
    assert.throws(() => new NdrReader(new NdrWriter().u32(1_000_000).done(), "x").count(), /an array of 1000000 elements/);
    assert.throws(() => new NdrReader(new NdrWriter().u32(1).u32(0).u32(5).done(), "x").wstring(), /malformed string/);
  });

  it("NetrShareGetInfo 502: a share without a descriptor reads as null, a length that disagrees fails", () => {
    const info = (sdPtr: number, reserved: number, sd?: Buffer) => {
      const w = new NdrWriter().u32(502).u32(0x20000).u32(0).u32(0).u32(0).u32(0).u32(0xffffffff).u32(1).u32(0).u32(0).u32(reserved).u32(sdPtr);
      if (sd) w.u32(sd.length).bytes(sd);
      return w.u32(0).done();
    };
    assert.equal(parseNetrShareGetInfo502(info(0, 0)), null);
    assert.deepEqual(parseNetrShareGetInfo502(info(0x20004, 4, Buffer.from([1, 2, 3, 4]))), Buffer.from([1, 2, 3, 4]));
    assert.throws(() => parseNetrShareGetInfo502(info(0x20004, 9, Buffer.from([1, 2, 3, 4]))), /announced as 9/);
  });
});

/** A self-relative descriptor: owner, group and (unless dacl is null) a DACL of these raw ACEs. */
function descriptor(dacl: Buffer[] | null): Buffer {
  const owner = sidBytes("S-1-5-32-544");
  const group = sidBytes("S-1-5-18");
  const aclBody = dacl ? Buffer.concat(dacl) : Buffer.alloc(0);
  const acl = Buffer.alloc(8);
  acl.writeUInt8(2, 0);
  acl.writeUInt16LE(8 + aclBody.length, 2);
  acl.writeUInt16LE(dacl?.length ?? 0, 4);
  const head = Buffer.alloc(20);
  head.writeUInt8(1, 0);
  head.writeUInt16LE(0x8000 | (dacl ? 0x0004 : 0), 2);
  head.writeUInt32LE(20, 4);
  head.writeUInt32LE(20 + owner.length, 8);
  head.writeUInt32LE(dacl ? 20 + owner.length + group.length : 0, 16);
  return Buffer.concat([head, owner, group, ...(dacl ? [acl, aclBody] : [])]);
}

function ace(type: number, flags: number, mask: number, sid: string): Buffer {
  const s = sidBytes(sid);
  const b = Buffer.alloc(8);
  b.writeUInt8(type, 0);
  b.writeUInt8(flags, 1);
  b.writeUInt16LE(8 + s.length, 2);
  b.writeUInt32LE(mask, 4);
  return Buffer.concat([b, s]);
}

describe("security descriptors", () => {
  it("owner, group and the DACL in order: allow, deny, inherited; inherit-only entries left out; other types kept as other", () => {
    const sd = parseSecurityDescriptor(
      descriptor([
        ace(1, 0, 0x1200a9, "S-1-5-21-1-2-3-1001"),
        ace(0, 0x10, 0x1200a9, "S-1-5-21-1-2-3-513"),
        ace(0, 0x08, 0x1200a9, "S-1-1-0"),
        ace(0x09, 0, 0x1200a9, "S-1-5-11"),
      ]),
    );
    assert.equal(sd.owner, "S-1-5-32-544");
    assert.equal(sd.group, "S-1-5-18");
    assert.deepEqual(sd.dacl, [
      { kind: "deny", inherited: false, mask: 0x1200a9, sid: "S-1-5-21-1-2-3-1001" },
      { kind: "allow", inherited: true, mask: 0x1200a9, sid: "S-1-5-21-1-2-3-513" },
      { kind: "other", inherited: false, mask: 0x1200a9, sid: "S-1-5-11" },
    ]);
  });

  it("no DACL is a NULL DACL (null); an empty one is []", () => {
    assert.equal(parseSecurityDescriptor(descriptor(null)).dacl, null);
    assert.deepEqual(parseSecurityDescriptor(descriptor([])).dacl, []);
  });

  it("offsets and sizes past the buffer fail with SecurityDescriptorError", () => {
    const good = descriptor([ace(0, 0, 0x1200a9, "S-1-1-0")]);
    const tooBigAce = Buffer.from(good);
    tooBigAce.writeUInt16LE(200, good.length - 12 - 8 + 2);
    assert.throws(() => parseSecurityDescriptor(tooBigAce), SecurityDescriptorError);
    const badOwner = Buffer.from(good);
    badOwner.writeUInt32LE(10_000, 4);
    assert.throws(() => parseSecurityDescriptor(badOwner), SecurityDescriptorError);
    assert.throws(() => parseSecurityDescriptor(good.subarray(0, 12)), /shorter than its header/);
  });
});
