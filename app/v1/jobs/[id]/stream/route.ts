export { GET } from "../../../../jobs/[id]/stream/route";
export const dynamic = "force-dynamic";
