import { statSync } from "node:fs";
import path from "node:path";
import type { FileToServe } from "../web/file-response";

/**
 * Scalar's standalone browser bundle (`@scalar/api-reference`, dist/browser/standalone.js: one
 * file, its styles inside), served from node_modules so the API reference page loads nothing from
 * a CDN.
 */
export const SCALAR_BUNDLE = path.join("node_modules", "@scalar", "api-reference", "dist", "browser", "standalone.js");

export function scalarBundle(root = process.cwd()): FileToServe {
  // Not traced by the build: the image copies node_modules whole (Dockerfile).
  const file = path.join(/*turbopackIgnore: true*/ root, SCALAR_BUNDLE);
  const { size, mtimeMs } = statSync(file);
  return {
    path: file,
    size,
    headers: {
      "content-type": "text/javascript; charset=utf-8",
      etag: `"${size.toString(16)}-${Math.floor(mtimeMs).toString(16)}"`,
      "cache-control": "public, max-age=3600",
    },
  };
}
