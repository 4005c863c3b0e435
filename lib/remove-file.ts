import { unlink } from "node:fs/promises";

/**
 * Removes a file, never failing: one gone already is what was wanted, and one that cannot be
 * removed is a stray file on disk, not a wrong answer, so the caller goes on either way.
 */
export async function removeFile(file: string): Promise<void> {
  await unlink(file).catch(() => {});
}
