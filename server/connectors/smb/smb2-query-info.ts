/** SMB2 QUERY_INFO (MS-SMB2 2.2.37/2.2.38) for a file's security descriptor (SMB2_0_INFO_SECURITY). */
import { HEADER_SIZE } from "./smb2-messages";

export const QUERY_INFO = 0x10;
const SMB2_0_INFO_SECURITY = 0x03;
/** OWNER_SECURITY_INFORMATION | GROUP_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION (MS-DTYP 2.4.7). */
export const OWNER_GROUP_DACL = 0x1 | 0x2 | 0x4;
/** OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION: what deciding who may read needs (decision 0480). */
export const OWNER_DACL = 0x1 | 0x4;
/** READ_CONTROL: reading the descriptor needs nothing else, so a file whose data the account may not read still answers. */
export const READ_CONTROL = 0x00020000;
export const STATUS_BUFFER_TOO_SMALL = 0xc0000023;

export function querySecurityRequest(fileId: Buffer, outputLength: number, additional = OWNER_GROUP_DACL): Buffer {
  const b = Buffer.alloc(41);
  b.writeUInt16LE(41, 0);
  b.writeUInt8(SMB2_0_INFO_SECURITY, 2);
  b.writeUInt8(0, 3); // FileInfoClass: none for security
  b.writeUInt32LE(outputLength, 4);
  b.writeUInt16LE(0, 8); // InputBufferOffset
  b.writeUInt32LE(0, 12); // InputBufferLength
  b.writeUInt32LE(additional, 16);
  b.writeUInt32LE(0, 20); // Flags
  fileId.copy(b, 24);
  return b;
}

export function parseQueryInfo(m: Buffer): Buffer {
  if (m.length < HEADER_SIZE + 8) throw new Error("A truncated QUERY_INFO response");
  const off = m.readUInt16LE(HEADER_SIZE + 2);
  const len = m.readUInt32LE(HEADER_SIZE + 4);
  if (off + len > m.length) throw new Error("A QUERY_INFO response shorter than its buffer");
  return Buffer.from(m.subarray(off, off + len));
}

/** The size a STATUS_BUFFER_TOO_SMALL error response asks for (its 4-byte ErrorData), or undefined. */
export function requiredSize(m: Buffer): number | undefined {
  const byteCount = m.length >= HEADER_SIZE + 8 ? m.readUInt32LE(HEADER_SIZE + 4) : 0;
  return byteCount >= 4 && m.length >= HEADER_SIZE + 12 ? m.readUInt32LE(HEADER_SIZE + 8) : undefined;
}
