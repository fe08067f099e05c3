import { useEffect, useState } from "react";
import * as api from "./api";

/** How often the banner asks again: free space changes slowly, and health is cheap. */
const POLL_MS = 60_000;

/** "1.4 MB", "2.1 GB": as the server writes free space in its job messages. */
function formatBytes(bytes: number): string {
  const units = ["bytes", "kB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

/** A banner while the disk holding Sluice's data is nearly full, saying what to do before ingestion stops. */
export function DiskSpaceWarning() {
  const [disk, setDisk] = useState<api.Health["disk"]>();
  useEffect(() => {
    let live = true;
    const check = () =>
      api.health().then(
        (h) => live && setDisk(h.disk),
        () => undefined, // an unreachable server has its own messages elsewhere
      );
    void check();
    const timer = setInterval(check, POLL_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, []);
  if (!disk?.low) return null;
  return (
    <div role="status" className="disk-warning">
      <strong>Disk space is low:</strong> {formatBytes(disk.free_bytes)} free where Sluice keeps its data. Free some space on that disk (or move
      Sluice's data folder, DATA_DIR, to a larger one); ingestion stops when too little is left.
    </div>
  );
}
