"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { AccountView } from "@/lib/accounts/account";
import { errorMessage, fetchJson, ProblemError } from "../api";
import { Button } from "../ui/button";
import { Field } from "../ui/field";
import { Input } from "../ui/input";
import { Alert } from "../ui/states";
import { reelKeys } from "../reels/queries";

/**
 * Connects an account, or reconnects one (`accountId` given: only the new token is asked for).
 * The token field is cleared once Graph accepted it.
 */
export function ConnectAccountForm({ accountId, onDone }: { accountId?: string; onDone?: () => void }) {
  const queryClient = useQueryClient();
  const [id, setId] = useState(accountId ?? "");
  const [token, setToken] = useState("");
  const [label, setLabel] = useState("");
  const connect = useMutation({
    mutationFn: (body: Record<string, string>) =>
      fetchJson<AccountView>("/v1/accounts", { method: "POST", json: body }),
    onSuccess: () => {
      setToken("");
      if (!accountId) {
        setId("");
        setLabel("");
      }
      void queryClient.invalidateQueries({ queryKey: reelKeys.accounts });
      onDone?.();
    },
  });
  const errors = connect.error instanceof ProblemError ? connect.error.fieldErrors() : {};
  const formError =
    connect.error && !errors.account_id && !errors.access_token && !errors.label
      ? errorMessage(connect.error)
      : undefined;

  return (
    <form
      noValidate
      aria-label={accountId ? `Reconnect account ${accountId}` : "Connect an account"}
      className="space-y-4"
      onSubmit={(event) => {
        event.preventDefault();
        connect.mutate({
          account_id: id.trim(),
          access_token: token.trim(),
          ...(label.trim() ? { label: label.trim() } : {}),
        });
      }}
    >
      {!accountId && (
        <Field
          label="Instagram account id"
          error={errors.account_id}
          hint="The numeric id of the Instagram professional account."
        >
          {(control) => (
            <Input
              {...control}
              name="account_id"
              inputMode="numeric"
              autoComplete="off"
              value={id}
              onChange={(e) => setId(e.target.value)}
            />
          )}
        </Field>
      )}
      <Field label={accountId ? "New access token" : "Access token"} error={errors.access_token}>
        {(control) => (
          <Input
            {...control}
            name="access_token"
            type="password"
            autoComplete="off"
            value={token}
            onChange={(e) => setToken(e.target.value)}
          />
        )}
      </Field>
      {!accountId && (
        <Field label="Label" error={errors.label} hint="Optional: how the dashboard names it.">
          {(control) => (
            <Input
              {...control}
              name="label"
              autoComplete="off"
              value={label}
              onChange={(e) => setLabel(e.target.value)}
            />
          )}
        </Field>
      )}
      {formError && <Alert>{formError}</Alert>}
      <div className="flex gap-2">
        <Button type="submit" loading={connect.isPending} size={accountId ? "sm" : "md"}>
          {accountId ? "Reconnect" : "Connect"}
        </Button>
        {onDone && (
          <Button variant="ghost" size="sm" onClick={onDone}>
            Cancel
          </Button>
        )}
      </div>
    </form>
  );
}
