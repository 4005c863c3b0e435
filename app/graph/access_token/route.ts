export { GET, HEAD, POST, PUT, PATCH, DELETE } from "../[version]/[...path]/route";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

// graph.instagram.com/access_token has no version segment, so [version]/[...path] (two segments at least) does not match it.
