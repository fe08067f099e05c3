import fs from "node:fs";

/** Where schedules read the time: the system clock, or a test's (docs/decisions/0150-schedule-test-clock.md). */
export type Clock = () => Date;

const systemClock: Clock = () => new Date();

/**
 * Test only (SLUICE_TEST_CLOCK_FILE): the time is the ISO 8601 text of a file that tests
 * rewrite, so several processes share one controlled clock and nobody waits for minutes.
 * Unset in production; an unreadable or empty file falls back to the system clock.
 */
export function fileClock(file: string): Clock {
  return () => {
    let text = "";
    try {
      text = fs.readFileSync(file, "utf8").trim();
    } catch {
      return new Date();
    }
    const time = new Date(text);
    return text && !Number.isNaN(time.getTime()) ? time : new Date();
  };
}

/** The clock a process runs on, from its configuration. */
export function clockOf(config: { testClockFile: string | null }): Clock {
  return config.testClockFile ? fileClock(config.testClockFile) : systemClock;
}
