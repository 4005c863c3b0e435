export { GET } from "../../../jobs/[id]/route";
export const dynamic = "force-dynamic";
export { POST, PUT, PATCH, DELETE, OPTIONS } from "../../../jobs/[id]/route";
