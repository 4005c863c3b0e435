import { describe, expect, it } from "vitest";
import { jobListQuerySchema } from "@/lib/jobs/read-job";
import { JOB_STATUS_INDEXING } from "@/lib/jobs/keys";
import { publicationListQuerySchema } from "@/lib/reels/read-publication";
import { listedIndex, statusIndexCommands, statusIndexKey } from "@/lib/status-index";

describe("the index per status", () => {
  it("sits beside the tenant index, one key per status, with no tenant's key another's", () => {
    expect(statusIndexKey("tenant:jobs:acme", "RUNNING")).toBe("tenant:jobs:acme:status:RUNNING");
    expect(listedIndex(JOB_STATUS_INDEXING, "acme")).toBe("tenant:jobs:acme");
    expect(listedIndex(JOB_STATUS_INDEXING, "acme", "QUEUED")).toBe("tenant:jobs:acme:status:QUEUED");
  });

  it("moves an item out of every other status's index and into its own at its creation time", () => {
    const commands = statusIndexCommands(JOB_STATUS_INDEXING, {
      tenantId: "acme",
      id: "j1",
      createdAtMs: 1_700_000_000_000,
      status: "COMPLETED",
    });
    expect(commands.filter(([word]) => word === "ZREM").map(([, key]) => key)).toEqual(
      ["QUEUED", "RUNNING", "FAILED", "CANCELLED"].map((s) => `tenant:jobs:acme:status:${s}`),
    );
    expect(commands).toContainEqual(["ZADD", "tenant:jobs:acme:status:COMPLETED", 1_700_000_000_000, "j1"]);
  });
});

describe("?status= of the lists", () => {
  it("takes a status of the list's own, or none", () => {
    expect(jobListQuerySchema.parse({ status: "RUNNING" })).toEqual({ limit: 20, status: "RUNNING" });
    expect(jobListQuerySchema.parse({})).toEqual({ limit: 20 });
    expect(publicationListQuerySchema.parse({ status: "TIMED_OUT", limit: "5" })).toEqual({
      limit: 5,
      status: "TIMED_OUT",
    });
  });

  it("refuses another list's status, a lower-case one, or an unknown parameter", () => {
    expect(jobListQuerySchema.safeParse({ status: "PUBLISHED" }).success).toBe(false);
    expect(publicationListQuerySchema.safeParse({ status: "RUNNING" }).success).toBe(false);
    expect(jobListQuerySchema.safeParse({ status: "queued" }).success).toBe(false);
    expect(jobListQuerySchema.safeParse({ state: "QUEUED" }).success).toBe(false);
  });
});
