import { Column, Entity, PrimaryColumn } from "typeorm";

/** A Drive file registered on a drive data source; (data_source_id, file_id) is unique. */
@Entity({ name: "drive_files" })
export class DriveFileRecord {
  @PrimaryColumn({ type: "varchar" })
  id: string;

  @Column({ type: "varchar", name: "data_source_id" })
  dataSourceId: string;

  @Column({ type: "varchar", name: "file_id" })
  fileId: string;

  @Column({ type: "varchar" })
  name: string;

  @Column({ type: "varchar", name: "mime_type" })
  mimeType: string;

  @Column({ type: Date, name: "registered_at" })
  registeredAt: Date;
}
