import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CONFIG_SCHEMA, CONFIG_VARIABLES } from "@/lib/config";

/** .env.example lists exactly the variables of the config schema, each with its meaning and, where it has one, its default. */
const ROOT = path.resolve(__dirname, "../..");
const lines = readFileSync(path.join(ROOT, ".env.example"), "utf8").split("\n");
const SETTING = /^# ([A-Z][A-Z0-9_]*)=(.*)$/;
const settings = lines.flatMap((line, i) => {
  const match = SETTING.exec(line);
  return match ? [{ name: match[1], value: match[2], meaning: lines[i - 1] ?? "" }] : [];
});

describe(".env.example", () => {
  it("lists every variable of the schema once, and nothing else", () => {
    const listed = settings.map((s) => s.name);
    expect(new Set(listed).size, "a variable is listed twice").toBe(listed.length);
    expect(
      CONFIG_VARIABLES.filter((v) => !listed.includes(v)),
      "variables of lib/config.ts missing from .env.example: add each with its meaning and default",
    ).toEqual([]);
    expect(
      listed.filter((v) => !(CONFIG_VARIABLES as string[]).includes(v)),
      "variables in .env.example that lib/config.ts does not read",
    ).toEqual([]);
  });

  it("says what each variable means, on the line above it", () => {
    for (const { name, meaning } of settings)
      expect(meaning, name).toMatch(/^# [^A-Z\s]|^# [A-Z][a-z]|^# [A-Z]+[ ,:.]|^# [a-z]/);
  });

  it.each(settings)("shows $name's default, or nothing when it has none", ({ name, value }) => {
    const field = CONFIG_SCHEMA.shape[name as keyof typeof CONFIG_SCHEMA.shape];
    if (field instanceof z.ZodDefault) {
      expect(value, `${name} has a default: show it`).not.toBe("");
      expect(field.parse(value)).toEqual(field.parse(undefined));
    } else {
      expect(value, `${name} has no default: leave it empty`).toBe("");
    }
  });
});
