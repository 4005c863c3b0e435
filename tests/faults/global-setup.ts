import path from "node:path";
import { buildIfStale } from "../../scripts/lib/build";

/** The fault suite runs the production build, as users do. */
export default function setup() {
  buildIfStale(path.resolve(__dirname, "../.."));
}
