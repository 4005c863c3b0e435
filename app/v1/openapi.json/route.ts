import { getConfig } from "@/lib/config";
import { json, otherMethods, withProblems } from "@/lib/web/http";
import { openApiDocument } from "@/lib/openapi/document";

export const dynamic = "force-dynamic";

/** The OpenAPI 3.1 document of the public API; open, as it holds no tenant data. */
export const GET = withProblems(async () => json(openApiDocument(getConfig().MAX_PROMPT_CHARS)));

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
