import { Column, Entity, PrimaryColumn } from "typeorm";

/** Drive details of a data source: whose grant ingestion uses. */
@Entity({ name: "drive_sources" })
export class DriveSourceRecord {
  @PrimaryColumn({ type: "varchar", name: "data_source_id" })
  dataSourceId: string;

  @Column({ type: "varchar", name: "owner_user_id" })
  ownerUserId: string;
}
