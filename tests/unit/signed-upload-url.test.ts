import { randomBytes, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseConfig } from "@/lib/config";
import { unfetchableUrlReason } from "@/lib/net/fetchable-public-url";
import { createUploadUrls } from "@/lib/reels/upload-for-graph";
import { SIGNED_UPLOAD_PATH, signUploadUrl, uploadUrlKey, verifyUploadUrl } from "@/lib/uploads/signed-upload-url";
import type { Redis } from "@/lib/redis";

/**
 * The address Graph fetches an Instagram Login account's upload from: what it proves and what it
 * refuses, byte by byte; and whether Meta could reach PUBLIC_URL at all.
 */

const accountsKey = randomBytes(32);
const key = uploadUrlKey(accountsKey);
const NOW = Date.parse("2026-12-07T12:00:00Z");
const grant = {
  uploadId: randomUUID(),
  publicationId: randomUUID(),
  extension: "mp4",
  expiresAtS: Math.floor(NOW / 1000) + 3600,
};
const signed = new URL(signUploadUrl(key, "https://dispatch.example.com/", grant));
const fileName = signed.pathname.split("/").pop()!;
const verify = (name: string, query: URLSearchParams, now = NOW, k = key) => verifyUploadUrl(k, name, query, now);
const withParam = (name: string, value: string) => {
  const query = new URLSearchParams(signed.searchParams);
  query.set(name, value);
  return query;
};

describe("signed upload addresses", () => {
  it("names the upload under PUBLIC_URL, and proves exactly the grant it was signed for", () => {
    expect(signed.origin).toBe("https://dispatch.example.com");
    expect(signed.pathname).toBe(`${SIGNED_UPLOAD_PATH}/${grant.uploadId}.mp4`);
    expect([...signed.searchParams.keys()]).toEqual(["publication", "expires", "signature"]);
    expect(signed.searchParams.get("signature")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(verify(fileName, signed.searchParams)).toEqual(grant);
  });

  it("is signed with a key derived from the accounts key, never with the accounts key itself", () => {
    expect(key.equals(accountsKey)).toBe(false);
    expect(key).toHaveLength(32);
    expect(uploadUrlKey(Buffer.from(accountsKey)).equals(key)).toBe(true);
    expect(verify(fileName, signed.searchParams, NOW, accountsKey)).toBeUndefined();
    const forged = new URL(signUploadUrl(accountsKey, "https://dispatch.example.com", grant));
    expect(verify(fileName, forged.searchParams)).toBeUndefined();
  });

  it("refuses a signature changed in any character, cut short, lengthened, or missing", () => {
    const signature = signed.searchParams.get("signature")!;
    for (let i = 0; i < signature.length; i++) {
      const other = signature[i] === "A" ? "B" : "A";
      const changed = `${signature.slice(0, i)}${other}${signature.slice(i + 1)}`;
      expect(verify(fileName, withParam("signature", changed)), `character ${i}`).toBeUndefined();
    }
    expect(verify(fileName, withParam("signature", signature.slice(0, 42)))).toBeUndefined();
    expect(verify(fileName, withParam("signature", signature.slice(0, 8)))).toBeUndefined();
    expect(verify(fileName, withParam("signature", `${signature}=`))).toBeUndefined();
    expect(verify(fileName, withParam("signature", ""))).toBeUndefined();
  });

  it("refuses another file, another publication, a moved end, and an end that has passed", () => {
    expect(verify(`${randomUUID()}.mp4`, signed.searchParams)).toBeUndefined();
    expect(verify(`${grant.uploadId}.mov`, signed.searchParams)).toBeUndefined();
    expect(verify(`${grant.uploadId}.txt`, signed.searchParams)).toBeUndefined();
    expect(verify(`../${grant.uploadId}.mp4`, signed.searchParams)).toBeUndefined();
    expect(verify(fileName, withParam("publication", randomUUID()))).toBeUndefined();
    expect(verify(fileName, withParam("expires", String(grant.expiresAtS + 86_400)))).toBeUndefined();
    expect(verify(fileName, signed.searchParams, grant.expiresAtS * 1000 - 1)).toEqual(grant);
    expect(verify(fileName, signed.searchParams, grant.expiresAtS * 1000)).toBeUndefined();
  });
});

describe("whether Meta could fetch from PUBLIC_URL", () => {
  it.each([
    ["https://dispatch.example.com", undefined],
    ["http://dispatch.example.com:8080", undefined],
    ["https://203.0.113.9", /not a public address/],
    ["https://8.8.8.8", undefined],
    ["https://[2001:4860:4860::8888]", undefined],
    ["http://127.0.0.1:3000", /not a public address/],
    ["http://[::1]:3000", /not a public address/],
    ["http://10.1.2.3", /not a public address/],
    ["http://192.168.1.20:3000", /not a public address/],
    ["http://169.254.169.254", /not a public address/],
    ["http://[fd00::1]", /not a public address/],
    ["http://localhost:3000", /names this machine/],
    ["http://app.localhost", /names this machine/],
    ["http://dispatch:3000", /names this machine or a local network/],
    ["ftp://dispatch.example.com", /not an http or https address/],
  ])("%s from the internet: %s", (publicUrl, expected) => {
    const reason = unfetchableUrlReason(publicUrl, "internet");
    if (expected === undefined) expect(reason).toBeUndefined();
    else expect(reason).toMatch(expected);
    if (reason) expect(reason).toContain("PUBLIC_URL");
  });

  it("lets the built-in sandbox, on this machine, fetch from loopback", () => {
    expect(unfetchableUrlReason("http://127.0.0.1:3000", "this-machine")).toBeUndefined();
    expect(unfetchableUrlReason("http://localhost:3000", "this-machine")).toBeUndefined();
    expect(unfetchableUrlReason("ftp://127.0.0.1", "this-machine")).toMatch(/not an http or https/);
  });

  it("decides by the account's Graph host: the built-in sandbox fetches on this machine, Meta from the internet", () => {
    const base = {
      REDIS_URL: "redis://127.0.0.1:6379",
      KAFKA_BROKERS: "a:9092",
      API_KEYS: "acme:acme-key-0123456789abcdef",
    };
    const redis = {} as Redis;
    const embedded = createUploadUrls(parseConfig(base), accountsKey, redis);
    expect(embedded.unreachableReason({ graphUrl: null })).toBeUndefined();
    expect(embedded.unreachableReason({ graphUrl: "http://127.0.0.1:3000/graph/" })).toBeUndefined();

    const real = parseConfig({ ...base, GRAPH_URL: "https://graph.facebook.com", REEL_ACCOUNTS: "acme:1784:EAAB" });
    const local = createUploadUrls(real, accountsKey, redis);
    const reason = local.unreachableReason({ graphUrl: "https://graph.instagram.com" });
    expect(reason).toMatch(/^PUBLIC_URL \(http:\/\/127\.0\.0\.1:3000\) is not a public address.*set PUBLIC_URL/);
    const deployed = createUploadUrls({ ...real, PUBLIC_URL: "https://dispatch.example.com" }, accountsKey, redis);
    expect(deployed.unreachableReason({ graphUrl: "https://graph.instagram.com" })).toBeUndefined();
  });

  it("signs a container's address for its 24 h life", () => {
    const urls = createUploadUrls(
      {
        PUBLIC_URL: "https://dispatch.example.com",
        GRAPH_URL: "x",
        GRAPH_SANDBOX: false,
        DATA_DIR: ".data",
        INSTAGRAM_LOGIN: { app: undefined, dialogUrl: "", tokenUrl: "", redirectUri: "", graphUrl: "x" },
        FACEBOOK_LOGIN: { app: undefined, dialogUrl: "", redirectUri: "", graphUrl: "x" },
      },
      accountsKey,
      {} as Redis,
    );
    const { url, expiresAt } = urls.sign(
      { uploadId: grant.uploadId, publicationId: grant.publicationId, file: `acme/${grant.uploadId}.mov` },
      NOW,
    );
    expect(expiresAt).toBe(new Date(NOW + 24 * 3600 * 1000).toISOString());
    const address = new URL(url);
    expect(address.pathname).toBe(`${SIGNED_UPLOAD_PATH}/${grant.uploadId}.mov`);
    expect(verify(`${grant.uploadId}.mov`, address.searchParams, NOW + 23 * 3600 * 1000)).toMatchObject({
      publicationId: grant.publicationId,
    });
  });
});
