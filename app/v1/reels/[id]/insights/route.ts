// The public path of /api/reels/[id]/insights (deprecated there, same handlers). Next reads segment config only
// from the route file itself, so it is written here again.
export { GET, POST, PUT, PATCH, DELETE, OPTIONS } from "@/app/api/reels/[id]/insights/route";
export const dynamic = "force-dynamic";
