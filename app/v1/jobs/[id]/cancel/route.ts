export { POST } from "../../../../jobs/[id]/cancel/route";
export const dynamic = "force-dynamic";
export { GET, PUT, PATCH, DELETE, OPTIONS } from "../../../../jobs/[id]/cancel/route";
