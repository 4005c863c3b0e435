import { notFoundRoute } from "@/lib/web/not-found-route";

export const dynamic = "force-dynamic";
export {
  notFoundRoute as GET,
  notFoundRoute as POST,
  notFoundRoute as PUT,
  notFoundRoute as PATCH,
  notFoundRoute as DELETE,
  notFoundRoute as OPTIONS,
};
