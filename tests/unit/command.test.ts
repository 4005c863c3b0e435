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
    const input = {
      ...valid,
      job_id: "0b0e7a39-5b1c-4c1d-9a57-3b2a7d1e0f00",
      temperature: 2,
      max_tokens: 32768,
      timestamp: "2026-01-01T00:00:00Z",
    };
    expect(completeCommand(schema.parse(input), new Date())).toEqual(input);
  });

  it.each([
    ["unknown field", { ...valid, extra: 1 }, ""],
    ["missing tenant_id", { model_name: "m", prompt: "p" }, "tenant_id"],
    ["tenant_id with a space", { ...valid, tenant_id: "a b" }, "tenant_id"],
    ["tenant_id too long", { ...valid, tenant_id: "a".repeat(129) }, "tenant_id"],
    ["empty prompt", { ...valid, prompt: "" }, "prompt"],
    ["prompt of only whitespace", { ...valid, prompt: " \n\t  " }, "prompt"],
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

  it.each([
    ["a missing prompt", { tenant_id: "acme", model_name: "m" }, "prompt", "Enter a prompt"],
    ["an empty prompt", { ...valid, prompt: "" }, "prompt", "Enter a prompt"],
    ["a prompt of only whitespace", { ...valid, prompt: "   " }, "prompt", "Enter a prompt"],
    ["a prompt over the limit", { ...valid, prompt: "x".repeat(101) }, "prompt", "Prompt is at most 100 characters"],
    ["a prompt that is not text", { ...valid, prompt: 5 }, "prompt", "Prompt must be text"],
    ["temperature out of range", { ...valid, temperature: 3 }, "temperature", "Temperature is between 0 and 2"],
    ["temperature as a string", { ...valid, temperature: "0.5" }, "temperature", "Temperature must be a number"],
    ["max_tokens not whole", { ...valid, max_tokens: 1.5 }, "max_tokens", "Max tokens must be a whole number"],
    ["max_tokens as a string", { ...valid, max_tokens: "10" }, "max_tokens", "Max tokens must be a whole number"],
    ["max_tokens out of range", { ...valid, max_tokens: 40000 }, "max_tokens", "Max tokens is between 1 and 32,768"],
    ["a missing model", { tenant_id: "acme", prompt: "p" }, "model_name", "Choose a model"],
    [
      "a bad tenant_id",
      { ...valid, tenant_id: "a b" },
      "tenant_id",
      "Tenant id is 1 to 128 letters, digits, dots, underscores or hyphens",
    ],
    ["a body that is no object", [], "", "The body must be a JSON object with the command's fields"],
  ])("says what is wrong with %s in people's words", (_name, body, path, message) => {
    const issues = schema.safeParse(body).error!.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
    expect(issues).toEqual([{ path, message }]);
  });

  it("counts the prompt limit with thousands separators", () => {
    const issue = commandInputSchema(32768).safeParse({ ...valid, prompt: "x".repeat(32769) }).error!.issues[0];
    expect(issue.message).toBe("Prompt is at most 32,768 characters");
  });
});
