"use client";

import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage, fetchJson, ProblemError } from "../api";
import { Button } from "../ui/button";
import { Field } from "../ui/field";
import { Input } from "../ui/input";

export function SignInForm({ next }: { next: string }) {
  const [apiKey, setApiKey] = useState("");
  const signIn = useMutation({
    mutationFn: (api_key: string) =>
      fetchJson<{ tenant_id: string }>("/api/session", { method: "POST", json: { api_key } }),
    // A full navigation, so the server-rendered layout sees the new cookie.
    onSuccess: () => window.location.assign(next),
  });
  const fieldErrors = signIn.error instanceof ProblemError ? signIn.error.fieldErrors() : {};
  const fieldError = fieldErrors.api_key;
  const formError = signIn.error && !fieldError ? errorMessage(signIn.error) : undefined;

  return (
    <form
      noValidate
      className="space-y-5"
      onSubmit={(event) => {
        event.preventDefault();
        signIn.mutate(apiKey);
      }}
    >
      <Field label="API key" error={fieldError} hint="Starts with dk_ for the built-in demo tenant.">
        {(control) => (
          <Input
            {...control}
            type="password"
            name="api_key"
            autoComplete="current-password"
            spellCheck={false}
            autoFocus
            placeholder="Paste your API key"
            value={apiKey}
            onChange={(event) => setApiKey(event.target.value)}
            className="font-mono"
          />
        )}
      </Field>
      {formError && (
        <p role="alert" className="text-sm text-red-600 dark:text-red-400">
          {formError}
        </p>
      )}
      <Button type="submit" className="w-full" loading={signIn.isPending || signIn.isSuccess}>
        Sign in
      </Button>
    </form>
  );
}
