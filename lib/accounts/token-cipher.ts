import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { readOrCreateSecretFile } from "../secret-file";

/**
 * Access tokens at rest: AES-256-GCM, a fresh IV per token, the account id as associated data
 * (a sealed token copied onto another account's record does not open). Sealed form:
 * `v1.<iv>.<tag>.<ciphertext>`, base64url.
 */

const VERSION = "v1";

/**
 * The key: from ACCOUNTS_SECRET, else a random key generated once into DATA_DIR/accounts-key
 * (mode 0600), linked into place so web and worker processes sharing DATA_DIR agree on one.
 */
export function loadAccountsKey(config: { ACCOUNTS_SECRET?: string; DATA_DIR: string }): Buffer {
  if (config.ACCOUNTS_SECRET)
    return createHash("sha256").update(`dispatch-accounts:${config.ACCOUNTS_SECRET}`).digest();
  const { file, value } = readOrCreateSecretFile(config.DATA_DIR, "accounts-key");
  const key = Buffer.from(value, "hex");
  if (key.length !== 32)
    throw new Error(`${file} holds no usable key; delete it (connected accounts must then be connected again)`);
  return key;
}

export function sealToken(key: Buffer, accountId: string, token: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(accountId));
  const ciphertext = Buffer.concat([cipher.update(token, "utf8"), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), ciphertext]
    .map((part) => (typeof part === "string" ? part : part.toString("base64url")))
    .join(".");
}

/** The token, or undefined when it was sealed under another key (or for another account), or is damaged. */
export function openToken(key: Buffer, accountId: string, sealed: string): string | undefined {
  const [version, iv, tag, ciphertext, ...rest] = sealed.split(".");
  if (version !== VERSION || !iv || !tag || ciphertext === undefined || rest.length > 0) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
    decipher.setAAD(Buffer.from(accountId));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8");
  } catch {
    return undefined;
  }
}
