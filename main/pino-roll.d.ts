/** pino-roll 4 ships no types: the part main/log-file.ts uses. */
declare module "pino-roll" {
  import type SonicBoom from "sonic-boom";
  import type { SonicBoomOpts } from "sonic-boom";

  interface PinoRollOptions extends Omit<SonicBoomOpts, "dest"> {
    file: string;
    size?: string | number;
    frequency?: "daily" | "hourly" | number;
    extension?: string;
    limit?: { count: number; removeOtherLogFiles?: boolean };
  }

  function pinoRoll(options: PinoRollOptions): Promise<SonicBoom>;
  export = pinoRoll;
}
