import os from "node:os";

/** The URLs colleagues on the LAN can use to reach this machine's server (https: LAN access is served over TLS, main/server-certificate.ts). */
export function lanUrls(port: number, interfaces = os.networkInterfaces(), scheme: "http" | "https" = "https"): string[] {
  const urls: string[] = [];
  for (const addresses of Object.values(interfaces)) {
    for (const address of addresses ?? []) {
      if (address.family === "IPv4" && !address.internal) urls.push(`${scheme}://${address.address}:${port}/`);
    }
  }
  return urls;
}
