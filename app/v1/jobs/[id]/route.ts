export { GET } from "../../../jobs/[id]/route";
export const dynamic = "force-dynamic";
