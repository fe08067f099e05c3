import type { OcrSettings } from "../../../config";
import type { SkipReason } from "../../../data/entities/ingest-job.entity";

export type { OcrSettings };

export const DEFAULT_OCR: OcrSettings = { enabled: true, languages: ["eng"], engine: "auto" };

/** Why a file that needs OCR was skipped with OCR=off (the job's skip list says it). */
export const OCR_OFF = "needs OCR, which is off (OCR=off)" satisfies SkipReason;
