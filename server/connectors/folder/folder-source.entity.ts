import { Column, Entity, PrimaryColumn } from "typeorm";

/** A folder source: the folder as the owner gave it (absolute, normalised); its real path is checked on every use. */
@Entity({ name: "folder_sources" })
export class FolderSourceRecord {
  @PrimaryColumn({ type: "varchar", name: "data_source_id" })
  dataSourceId: string;

  @Column({ type: "varchar" })
  path: string;
}
