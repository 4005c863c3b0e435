/** The browser's side of Dispatch's APIs: JSON in, JSON out, problem+json errors as ProblemError. */

import type { Problem } from "@/lib/errors";

export type { Problem };

export class ProblemError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail || problem.title);
  }

  get status() {
    return this.problem.status;
  }

  /** The first message for each field path, for showing next to the field it is about. */
  fieldErrors(): Record<string, string> {
    const byPath: Record<string, string> = {};
    // Schema messages read "must not be empty"; next to a field they start a sentence.
    for (const { path, message } of this.problem.errors ?? [])
      byPath[path] ??= message.charAt(0).toUpperCase() + message.slice(1);
    return byPath;
  }
}

export async function fetchJson<T>(url: string, init: RequestInit & { json?: unknown } = {}): Promise<T> {
  const { json, headers, ...rest } = init;
  const response = await fetch(url, {
    ...rest,
    credentials: "same-origin",
    headers: {
      accept: "application/json",
      ...(json === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    body: json === undefined ? rest.body : JSON.stringify(json),
  });
  const type = response.headers.get("content-type") ?? "";
  const body: unknown = type.includes("json") ? await response.json().catch(() => undefined) : undefined;
  if (!response.ok) {
    const problem = body && typeof body === "object" && "status" in body ? (body as Problem) : undefined;
    throw new ProblemError(
      problem ?? {
        type: "about:blank",
        title: response.statusText || "Error",
        status: response.status,
        detail: `The server answered ${response.status}.`,
      },
    );
  }
  return body as T;
}

/** A message fit to show a person, whatever was thrown. */
export function errorMessage(error: unknown): string {
  if (error instanceof ProblemError) return error.problem.detail || error.problem.title;
  if (error instanceof TypeError) return "Could not reach the server. Check your connection and try again.";
  return error instanceof Error ? error.message : String(error);
}
