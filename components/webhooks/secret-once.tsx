"use client";

import { useState } from "react";
import { Button } from "../ui/button";

/** The signing secret, shown once right after creation: the API never returns it again. */
export function SecretOnce({ secret, url, onDone }: { secret: string; url: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div
      role="status"
      className="rounded-lg border border-amber-200 bg-amber-50 px-4 py-3 text-sm text-amber-900 dark:border-amber-900 dark:bg-amber-950/50 dark:text-amber-200"
    >
      <p className="font-medium">Copy the signing secret now</p>
      <p className="mt-1 opacity-90">
        It verifies the deliveries to <span className="break-all font-mono text-xs">{url}</span>. It is shown only this
        once.
      </p>
      <div className="mt-3 flex flex-col gap-2 sm:flex-row sm:items-center">
        <code
          data-testid="webhook-secret"
          className="min-w-0 flex-1 rounded-md bg-white px-2.5 py-2 font-mono text-xs break-all text-zinc-900 ring-1 ring-amber-200 dark:bg-zinc-900 dark:text-zinc-100 dark:ring-amber-900"
        >
          {secret}
        </code>
        <div className="flex gap-2">
          <Button
            size="sm"
            variant="secondary"
            onClick={() => {
              void navigator.clipboard?.writeText(secret).then(
                () => setCopied(true),
                () => setCopied(false),
              );
            }}
          >
            {copied ? "Copied" : "Copy"}
          </Button>
          <Button size="sm" variant="ghost" onClick={onDone}>
            Done
          </Button>
        </div>
      </div>
    </div>
  );
}
