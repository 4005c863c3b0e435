// The public path of /api/uploads (deprecated there, same handlers). Next reads segment config only
// from the route file itself, so it is written here again.
export { GET, POST, PUT, PATCH, DELETE, OPTIONS } from "@/app/api/uploads/route";
export const runtime = "nodejs";
export const dynamic = "force-dynamic";
