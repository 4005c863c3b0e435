import { describe, expect, it } from "vitest";
import { commandInputSchema, completeCommand } from "@/lib/jobs/command";

const valid = { tenant_id: "acme", model_name: "local-ngram", prompt: "hello" };
const schema = commandInputSchema(100);

describe("generation command schema", () => {
  it("fills the defaults of the spec", () => {
    const parsed = schema.parse(valid);
    expect(parsed).toEqual({ ...valid, temperature: 0.2, max_tokens: 2048 });
    const command = completeCommand(parsed, new Date("2026-01-02T03:04:05.000Z"));
    expect(command.job_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(command.timestamp).toBe("2026-01-02T03:04:05.000Z");
  });

  it("keeps what the client chose", () => {
    const input = { ...valid, job_id: "0b0e7a39-5b1c-4c1d-9a57-3b2a7d1e0f00", temperature: 2, max_tokens: 32768, timestamp: "2026-01-01T00:00:00Z" };
    expect(completeCommand(schema.parse(input), new Date())).toEqual(input);
  });

  it.each([
    ["unknown field", { ...valid, extra: 1 }, ""],
    ["missing tenant_id", { model_name: "m", prompt: "p" }, "tenant_id"],
    ["tenant_id with a space", { ...valid, tenant_id: "a b" }, "tenant_id"],
    ["tenant_id too long", { ...valid, tenant_id: "a".repeat(129) }, "tenant_id"],
    ["empty prompt", { ...valid, prompt: "" }, "prompt"],
    ["prompt over the limit", { ...valid, prompt: "x".repeat(101) }, "prompt"],
    ["prompt not a string", { ...valid, prompt: 5 }, "prompt"],
    ["missing model", { tenant_id: "acme", prompt: "p" }, "model_name"],
    ["temperature below 0", { ...valid, temperature: -0.1 }, "temperature"],
    ["temperature above 2", { ...valid, temperature: 2.01 }, "temperature"],
    ["temperature as a string", { ...valid, temperature: "0.5" }, "temperature"],
    ["max_tokens 0", { ...valid, max_tokens: 0 }, "max_tokens"],
    ["max_tokens above 32768", { ...valid, max_tokens: 32769 }, "max_tokens"],
    ["max_tokens not an integer", { ...valid, max_tokens: 1.5 }, "max_tokens"],
    ["job_id not a UUID", { ...valid, job_id: "job-1" }, "job_id"],
    ["job_id in capitals", { ...valid, job_id: "0B0E7A39-5B1C-4C1D-9A57-3B2A7D1E0F00" }, "job_id"],
    ["timestamp without zone", { ...valid, timestamp: "2026-01-01T00:00:00" }, "timestamp"],
    ["timestamp with an offset", { ...valid, timestamp: "2026-01-01T00:00:00+02:00" }, "timestamp"],
    ["timestamp not a date", { ...valid, timestamp: "2026-13-45T00:00:00Z" }, "timestamp"],
  ])("refuses %s", (_name, body, path) => {
    const result = schema.safeParse(body);
    expect(result.success).toBe(false);
    expect(result.error!.issues.map((i) => i.path.join("."))).toContain(path);
  });
});
