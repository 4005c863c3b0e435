"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { MAX_CAPTION_CHARS } from "@/lib/graph/caption-limits";
import { errorMessage, ProblemError } from "../api";
import { zoneLabel } from "../format";
import { Button } from "../ui/button";
import { Card, CardBody, CardHeader } from "../ui/card";
import { Field } from "../ui/field";
import { Input } from "../ui/input";
import { Alert } from "../ui/states";
import { Textarea } from "../ui/textarea";
import { cancelPublication, editPublication, reelKeys, type Publication } from "./queries";

/** An ISO time as a datetime-local input's value, in the browser's zone. */
export function toLocalInput(iso: string): string {
  const date = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** Cancel a scheduled reel, or move it and change its caption, while it is still only scheduled. */
export function ScheduledActions({ view }: { view: Publication }) {
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [publishAt, setPublishAt] = useState(view.publish_at ? toLocalInput(view.publish_at) : "");
  const [caption, setCaption] = useState(view.caption);
  const [localError, setLocalError] = useState<string>();
  const settle = (updated: Publication) => {
    queryClient.setQueryData(reelKeys.one(view.publication_id), updated);
    void queryClient.invalidateQueries({ queryKey: reelKeys.list });
  };
  const cancel = useMutation({ mutationFn: () => cancelPublication(view.publication_id), onSuccess: settle });
  const edit = useMutation({
    mutationFn: (changes: { publish_at?: string; caption?: string }) => editPublication(view.publication_id, changes),
    onSuccess: (updated) => {
      settle(updated);
      setEditing(false);
    },
  });
  const fieldErrors = edit.error instanceof ProblemError ? edit.error.fieldErrors() : {};
  const editError =
    edit.error && !fieldErrors.publish_at && !fieldErrors.caption ? errorMessage(edit.error) : undefined;

  return (
    <Card aria-labelledby="scheduled-actions">
      <CardHeader
        title={<span id="scheduled-actions">Scheduled</span>}
        description="Until it goes out you can move it, change its caption, or cancel it."
      />
      <CardBody className="space-y-4">
        {editing ? (
          <form
            noValidate
            aria-label="Edit the scheduled reel"
            className="space-y-4"
            onSubmit={(event) => {
              event.preventDefault();
              const date = new Date(publishAt);
              if (!publishAt || Number.isNaN(date.getTime())) {
                setLocalError("Pick a date and time.");
                return;
              }
              setLocalError(undefined);
              const changes: { publish_at?: string; caption?: string } = {};
              if (!view.publish_at || date.getTime() !== Date.parse(view.publish_at))
                changes.publish_at = date.toISOString();
              if (caption !== view.caption) changes.caption = caption;
              if (Object.keys(changes).length === 0) setEditing(false);
              else edit.mutate(changes);
            }}
          >
            <Field
              label="Publish at"
              error={localError ?? fieldErrors.publish_at}
              hint={`In your time zone: ${zoneLabel(publishAt ? new Date(publishAt) : undefined)}.`}
            >
              {(control) => (
                <Input
                  {...control}
                  name="publish_at"
                  type="datetime-local"
                  value={publishAt}
                  onChange={(e) => setPublishAt(e.target.value)}
                />
              )}
            </Field>
            <Field
              label="Caption"
              error={fieldErrors.caption}
              hint={`Up to ${MAX_CAPTION_CHARS.toLocaleString("en-US")} characters.`}
            >
              {(control) => (
                <Textarea
                  {...control}
                  name="caption"
                  rows={3}
                  value={caption}
                  onChange={(e) => setCaption(e.target.value)}
                />
              )}
            </Field>
            {editError && <Alert title="Not changed">{editError}</Alert>}
            <div className="flex flex-wrap justify-end gap-2">
              <Button variant="ghost" onClick={() => setEditing(false)} disabled={edit.isPending}>
                Discard
              </Button>
              <Button type="submit" loading={edit.isPending}>
                Save changes
              </Button>
            </div>
          </form>
        ) : (
          <div className="flex flex-wrap gap-2">
            <Button variant="secondary" onClick={() => setEditing(true)}>
              Reschedule or edit caption
            </Button>
            {confirming ? (
              <>
                <Button variant="danger" loading={cancel.isPending} onClick={() => cancel.mutate()}>
                  Yes, cancel it
                </Button>
                <Button variant="ghost" onClick={() => setConfirming(false)} disabled={cancel.isPending}>
                  Keep it
                </Button>
              </>
            ) : (
              <Button variant="danger" onClick={() => setConfirming(true)}>
                Cancel publication
              </Button>
            )}
          </div>
        )}
        {cancel.isError && <Alert title="Not cancelled">{errorMessage(cancel.error)}</Alert>}
      </CardBody>
    </Card>
  );
}
