import { z } from "zod";
import { DATA_SOURCE_NAME } from "../../routing/data-sources.schemas";

/** Request schemas of the SMB endpoints. */

export const createSmbSourceBody = z.object({
  data_source: z.object({ data_source_name: DATA_SOURCE_NAME }),
  smb_source: z.object({
    remote_system_username: z.string().min(1, "is required").max(256),
    remote_smb_password: z.string().max(256, "must be at most 256 characters"),
    remote_system_name: z
      .string()
      .min(1, "is required")
      .max(253)
      .regex(/^[A-Za-z0-9._-]+$/, "must be a host name (letters, digits, dots, hyphens)"),
    local_system_name: z.string().max(253).default(""),
    default_ip: z.union([z.ipv4(), z.ipv6()], "must be an IPv4 or IPv6 address").nullish(),
    port: z.number().int().min(1).max(65535).default(445),
    /** Each person sees only the files the file server lets their linked Windows account read (issue 33). */
    source_permissions: z.boolean().default(false),
  }),
});
