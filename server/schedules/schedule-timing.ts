import { Cron } from "croner";
import { BadRequestError } from "../errors";

/** What a schedule says about time: every N minutes, or a cron pattern read in a time zone. */
export type ScheduleRule = { everyMinutes: number } | { cron: string; timezone: string };

export const MIN_EVERY_MINUTES = 5;
/** A year: longer intervals are a cron pattern's job. */
export const MAX_EVERY_MINUTES = 366 * 24 * 60;

/** The five fields of a standard cron pattern, in order (croner's names for them). */
const CRON_FIELDS = ["minute", "hour", "day", "month", "dayOfWeek"] as const;
const FIELD_WORDS: Record<(typeof CRON_FIELDS)[number], string> = {
  minute: "minute",
  hour: "hour",
  day: "day of month",
  month: "month",
  dayOfWeek: "day of week",
};

/** The server's own IANA time zone: the default of a schedule that names none. */
export function serverTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

/** 400 "unknown time zone X" unless the runtime's time zone database knows the name. */
export function assertTimeZone(timezone: string): void {
  try {
    new Intl.DateTimeFormat("en", { timeZone: timezone });
  } catch {
    throw new BadRequestError(`unknown time zone ${timezone}`);
  }
}

/**
 * 400 naming the field at fault unless `pattern` is a standard five-field cron pattern
 * (minute hour day-of-month month day-of-week) that matches some date. Each field is
 * checked alone by croner, so the message can say which one is wrong.
 */
export function assertCronPattern(pattern: string, timezone: string): void {
  const fields = pattern.trim().split(/\s+/);
  if (fields.length !== CRON_FIELDS.length) {
    throw new BadRequestError(`cron pattern must have five fields (minute hour day-of-month month day-of-week), got ${fields.length}`);
  }
  fields.forEach((field, i) => {
    const alone = CRON_FIELDS.map((_, j) => (j === i ? field : "*")).join(" ");
    try {
      new Cron(alone, { paused: true });
    } catch (error) {
      const reason = String((error as Error).message).replace(/^CronPattern:\s*/, "");
      const name = FIELD_WORDS[CRON_FIELDS[i]];
      if (/^Invalid value for/.test(reason)) throw new BadRequestError(`cron field ${i + 1} out of range: ${name} ${field}`);
      throw new BadRequestError(`cron field ${i + 1} (${name}) is not valid: ${reason}`);
    }
  });
  if (nextCronRun(pattern, timezone, new Date()) === null) throw new BadRequestError(`cron pattern ${pattern} never matches a date`);
}

function nextCronRun(pattern: string, timezone: string, after: Date): Date | null {
  return new Cron(pattern.trim(), { timezone, paused: true }).nextRun(after);
}

/**
 * The first run strictly after `after`. An interval counts from `after` (the moment the schedule
 * was set, or a due run's start); a cron pattern gives its next slot in its time zone, so runs
 * missed while nothing ran collapse into the one due now. Null: the pattern has no further date.
 */
export function nextRunAfter(rule: ScheduleRule, after: Date): Date | null {
  if ("everyMinutes" in rule) return new Date(after.getTime() + rule.everyMinutes * 60_000);
  return nextCronRun(rule.cron, rule.timezone, after);
}
