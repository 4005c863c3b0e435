import { randomBytes } from "node:crypto";
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * A random secret (32 bytes, hex) generated once into DATA_DIR/<name> (mode 0600) and read from
 * there after. It is written whole to a temporary file and linked into place, which fails if
 * another process sharing DATA_DIR got there first: then both use that one.
 */
export function readOrCreateSecretFile(dataDir: string, name: string): { file: string; value: string } {
  const file = path.resolve(dataDir, name);
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  writeFileSync(temporary, randomBytes(32).toString("hex"), { mode: 0o600 });
  try {
    linkSync(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    unlinkSync(temporary);
  }
  return { file, value: readFileSync(file, "utf8").trim() };
}
