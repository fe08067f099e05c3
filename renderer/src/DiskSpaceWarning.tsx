import { useQuery } from "@tanstack/react-query";
import { queries } from "./api";
import { formatBytes } from "./format";

/** A banner while the disk holding Sluice's data is nearly full, saying what to do before ingestion stops. */
export function DiskSpaceWarning() {
  // An unreachable server has its own messages elsewhere: a failed check shows nothing here.
  const disk = useQuery(queries.health()).data?.disk;
  if (!disk?.low) return null;
  return (
    <div role="status" className="disk-warning">
      <strong>Disk space is low:</strong> {formatBytes(disk.free_bytes, "decimal")} free where Sluice keeps its data. Free some space on that disk (or move
      Sluice's data folder, DATA_DIR, to a larger one); ingestion stops when too little is left.
    </div>
  );
}
