import { z } from "zod";

/** A tenant id (SPEC: 1–128 of `[A-Za-z0-9._-]`): in API keys, commands and Redis keys alike. */
export const TENANT_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

export const tenantIdSchema = z
  .string({ error: (issue) => (issue.input === undefined ? "Tenant id is required" : "Tenant id must be text") })
  .regex(TENANT_ID_PATTERN, "Tenant id is 1 to 128 letters, digits, dots, underscores or hyphens");
