import type { UserModelRecord } from "../data/entities/user-model.entity";

/** An entry of a user's personal model list with its catalog model's name. */
export interface PersonalModel {
  record: UserModelRecord;
  modelName: string;
}
