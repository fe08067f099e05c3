import { z } from "zod";
import { ID } from "../routing/common.schemas";
import { MAX_EVERY_MINUTES, MIN_EVERY_MINUTES } from "../schedules/schedule-timing";

/** Request schemas of the pipeline routes. */
export const createPipelineBody = z.object({
  name: z.string().trim().min(1, "is required").max(200),
  description: z.string().max(2000).default(""),
  data_source_id: ID,
  collection_id: ID,
});

/**
 * PUT /data_pipelines/{id}/schedule: `{every_minutes}` or `{cron, timezone?}` sets or replaces the
 * schedule (`paused` may come along); `{paused}` alone pauses or resumes the one there is. The cron
 * pattern and the time zone are checked by the service, which can say which field is wrong.
 */
export const setScheduleBody = z
  .strictObject({
    every_minutes: z
      .number({ error: "must be a whole number of minutes" })
      .int({ error: "must be a whole number of minutes" })
      .min(MIN_EVERY_MINUTES, { error: `must be at least ${MIN_EVERY_MINUTES}` })
      .max(MAX_EVERY_MINUTES, { error: `must be at most ${MAX_EVERY_MINUTES} (a year); use a cron pattern for longer` })
      .optional(),
    cron: z.string({ error: "must be a cron pattern" }).trim().min(1, { error: "must be a cron pattern" }).max(200).optional(),
    timezone: z.string({ error: "must be an IANA time zone name" }).trim().min(1, { error: "must be an IANA time zone name" }).max(100).optional(),
    paused: z.boolean({ error: "must be true or false" }).optional(),
  })
  .superRefine((body, ctx) => {
    if (body.every_minutes !== undefined && body.cron !== undefined) {
      ctx.addIssue({ code: "custom", path: ["cron"], message: "cannot be given together with every_minutes; choose one" });
    } else if (body.every_minutes === undefined && body.cron === undefined) {
      if (body.paused === undefined) ctx.addIssue({ code: "custom", path: [], message: "must give every_minutes, cron (with an optional timezone) or paused" });
      else if (body.timezone !== undefined) ctx.addIssue({ code: "custom", path: ["timezone"], message: "needs a cron pattern or every_minutes to go with" });
    }
  });
