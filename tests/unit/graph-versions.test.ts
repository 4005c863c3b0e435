import { describe, expect, it } from "vitest";
import { parseConfig } from "@/lib/config";
import {
  DEFAULT_GRAPH_VERSION,
  GRAPH_VERSIONS,
  graphVersionLife,
  graphVersionWarning,
  liveGraphVersions,
  warnAboutGraphVersion,
} from "@/lib/graph/versions";
import type { Log } from "@/lib/log";

const at = (date: string) => Date.parse(`${date}T12:00:00Z`);
const DAY_MS = 24 * 60 * 60 * 1000;

describe("Graph API versions (Meta's changelog)", () => {
  it("holds graph-reference.md's dates", () => {
    const row = (v: string) => GRAPH_VERSIONS.find((r) => r.version === v);
    expect(row("v19.0")?.ends).toBe("2026-05-21");
    expect(row("v20.0")?.ends).toBe("2026-09-24");
    expect(row("v21.0")?.ends).toBe("2027-01-21");
    expect(row("v26.0")).toEqual({ version: "v26.0", released: "2026-07-29" });
  });

  it("serves what is live on the day: v26.0 from its release, v20.0 no more after its end", () => {
    expect(liveGraphVersions(at("2026-07-28"))).toEqual(["v20.0", "v21.0", "v22.0", "v23.0", "v24.0", "v25.0"]);
    expect(liveGraphVersions(at("2026-12-07"))).toEqual(["v21.0", "v22.0", "v23.0", "v24.0", "v25.0", "v26.0"]);
    expect(graphVersionLife("v20.0", at("2026-09-24"))).toMatchObject({ state: "ended" });
    expect(graphVersionLife("v20.0", at("2026-09-23"))).toMatchObject({ state: "live" });
    // Older than the table: ended too (Meta's table ends them all). Not yet released, or never: unknown.
    expect(graphVersionLife("v12.0", at("2026-12-07")).state).toBe("ended");
    expect(graphVersionLife("v27.0", at("2026-12-07")).state).toBe("unknown");
    expect(graphVersionLife("latest", at("2026-12-07")).state).toBe("unknown");
  });

  it("warns within 30 days of the end, and says plainly when it has ended", () => {
    const end = Date.parse("2027-01-21T00:00:00Z");
    expect(graphVersionWarning("v21.0", end - 31 * DAY_MS)).toBeUndefined();
    expect(graphVersionWarning("v21.0", end - 30 * DAY_MS)).toBe(
      "GRAPH_VERSION v21.0 ends on 2027-01-21 (in 30 days); set GRAPH_VERSION to v26.0",
    );
    expect(graphVersionWarning("v21.0", end + DAY_MS)).toMatch(
      /^GRAPH_VERSION v21\.0 has ended \(2027-01-21\): .* set GRAPH_VERSION to v26\.0$/,
    );
    expect(graphVersionWarning("v26.0", end)).toBeUndefined();
    expect(graphVersionWarning("v99.0", end)).toMatch(/not a released Graph API version/);
  });

  it("logs the warning at start-up as a warn line, and nothing while the version has time left", () => {
    const lines: Parameters<Log>[] = [];
    const log: Log = (...line) => lines.push(line);
    warnAboutGraphVersion("v26.0", log, at("2026-12-07"));
    expect(lines).toEqual([]);
    warnAboutGraphVersion("v21.0", log, at("2027-01-01"));
    expect(lines).toEqual([
      [
        "warn",
        expect.stringMatching(/^GRAPH_VERSION v21\.0 ends on 2027-01-21 \(in 20 days\)/),
        { graph_version: "v21.0" },
      ],
    ]);
  });

  it("defaults GRAPH_VERSION to a version live for the coming year", () => {
    const config = parseConfig({
      REDIS_URL: "redis://127.0.0.1:6379",
      KAFKA_BROKERS: "a:9092",
      API_KEYS: "acme:acme-key-0123456789abcdef",
    });
    expect(config.GRAPH_VERSION).toBe(DEFAULT_GRAPH_VERSION);
    const released = Date.parse(
      `${GRAPH_VERSIONS.find((v) => v.version === DEFAULT_GRAPH_VERSION)!.released}T00:00:00Z`,
    );
    for (const day of [0, 180, 365]) {
      expect(graphVersionLife(DEFAULT_GRAPH_VERSION, released + day * DAY_MS).state, `day ${day}`).toBe("live");
    }
  });
});
