import { decompressRTF } from "@kenjiuno/decompressrtf";
import MsgReader from "@kenjiuno/msgreader";
import { simpleParser, type AddressObject } from "mailparser";
import { corruptFile } from "../failures";
import { htmlText } from "./markup-text";
import { rtfText } from "./rtf";

// E-mail messages: the subject is the title; the text is who wrote to whom and when, then the
// body (its plain-text part, else its HTML part through the HTML path). Attachments are not
// indexed: they are other documents, and a message's own words are what a search for it uses.

interface Message {
  subject?: string;
  from?: string;
  to?: string;
  date?: string;
  body: string;
}

function messageText({ subject, from, to, date, body }: Message): { title?: string; text: string } {
  const header = [from && `From: ${from}`, to && `To: ${to}`, date && `Date: ${date}`, subject && `Subject: ${subject}`].filter(Boolean);
  return { title: subject?.trim() || undefined, text: [header.join("\n"), body].filter((part) => part.trim()).join("\n\n") };
}

/** An Internet message (.eml, RFC 5322 / MIME), read with mailparser. */
export async function emlText(bytes: Uint8Array): Promise<{ title?: string; text: string }> {
  const source = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const parsed = await simpleParser(source, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true, skipTextLinks: true }).catch(() => {
    throw corruptFile("e-mail message");
  });
  // A message without any header is just text with an .eml name: nothing a mail reader would show.
  if (parsed.headers.size === 0) throw corruptFile("e-mail message");
  const addresses = (value: AddressObject | AddressObject[] | undefined): string | undefined =>
    value === undefined
      ? undefined
      : (Array.isArray(value) ? value : [value])
          .flatMap((a) => a.value)
          .map((a) => (a.name ? `${a.name} <${a.address ?? ""}>` : (a.address ?? "")))
          .join(", ");
  const body = parsed.text?.trim() ? parsed.text : typeof parsed.html === "string" ? htmlText(parsed.html).text : "";
  return messageText({ subject: parsed.subject, from: addresses(parsed.from), to: addresses(parsed.to), date: parsed.date?.toISOString(), body });
}

/** An Outlook item (.msg, an OLE compound file), read with @kenjiuno/msgreader. */
export function msgText(bytes: Uint8Array): { title?: string; text: string } {
  let fields: ReturnType<MsgReader["getFileData"]>;
  try {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    fields = new MsgReader(view).getFileData();
  } catch {
    throw corruptFile("Outlook message");
  }
  if (fields.error) throw corruptFile("Outlook message");
  let body = fields.body ?? "";
  if (!body.trim() && fields.bodyHtml) body = htmlText(fields.bodyHtml).text;
  if (!body.trim() && fields.compressedRtf) body = rtfText(Uint8Array.from(decompressRTF([...fields.compressedRtf]))).text;
  const from = [fields.senderName, fields.senderEmail && `<${fields.senderEmail}>`].filter(Boolean).join(" ");
  const to = (fields.recipients ?? []).map((r) => r.name ?? r.email).filter(Boolean).join(", ");
  return messageText({ subject: fields.subject, from: from || undefined, to: to || undefined, body });
}
