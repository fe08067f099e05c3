/**
 * One logger for the server. Lines are plain text on stdout/stderr. Callers pass
 * messages, never request bodies or headers, so no password or token can reach a log.
 */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

function line(level: string, message: string): string {
  return `${new Date().toISOString()} ${level} ${message}`;
}

export const consoleLogger: Logger = {
  info: (message) => process.stdout.write(line("info", message) + "\n"),
  warn: (message) => process.stderr.write(line("warn", message) + "\n"),
  error: (message) => process.stderr.write(line("error", message) + "\n"),
};
