import { ApiError } from "../errors";
import { problemResponse } from "./http";

/** Unknown paths under the API prefixes answer in the API's error shape, not with an HTML page. */
export const notFoundRoute = async () =>
  problemResponse(new ApiError("not-found", "No such endpoint. See the README for the API."));
