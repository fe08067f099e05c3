import os from "node:os";

/** The URLs colleagues on the LAN can use to reach this machine's server. */
export function lanUrls(port: number, interfaces = os.networkInterfaces()): string[] {
  const urls: string[] = [];
  for (const addresses of Object.values(interfaces)) {
    for (const address of addresses ?? []) {
      if (address.family === "IPv4" && !address.internal) urls.push(`http://${address.address}:${port}/`);
    }
  }
  return urls;
}
