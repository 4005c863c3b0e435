import { z } from "zod";

/** A tenant id (SPEC: 1–128 of `[A-Za-z0-9._-]`): in API keys, commands and Redis keys alike. */
export const TENANT_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

export const tenantIdSchema = z.string().regex(TENANT_ID_PATTERN, "must be 1-128 characters of A-Z a-z 0-9 . _ -");
