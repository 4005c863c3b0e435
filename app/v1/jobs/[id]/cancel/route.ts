export { POST } from "../../../../jobs/[id]/cancel/route";
export const dynamic = "force-dynamic";
