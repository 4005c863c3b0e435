"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useId, useState } from "react";
import { errorMessage, fetchJson, ProblemError } from "../api";
import { Button, focusRing } from "../ui/button";
import { cx } from "../ui/cx";
import { Field } from "../ui/field";
import { Input } from "../ui/input";
import { Select } from "../ui/select";
import { Alert } from "../ui/states";
import { Textarea } from "../ui/textarea";
import { countCaption, MAX_CAPTION_CHARS } from "@/lib/graph/caption-limits";
import { zoneLabel } from "../format";
import { fetchAccounts, reelKeys } from "./queries";
import { VideoFilePicker, type UploadedVideo } from "./video-file-picker";
import {
  hasReelOptionError,
  NO_REEL_OPTIONS,
  OPTION_PARAMETERS,
  ReelOptions,
  reelOptionsBody,
  type ReelOptionsValue,
} from "./reel-options";

const SAMPLES = [
  { file: "reel-valid.mp4", label: "Valid reel", note: "H.264, 9:16, a few seconds" },
  { file: "reel-too-short.mp4", label: "Too short", note: "under the 3 s minimum" },
  { file: "reel-unsupported.mp4", label: "Unsupported", note: "a codec reels do not accept" },
];

/** `uploadMaxBytes`: UPLOAD_MAX_BYTES, so the file picker refuses a video the server would refuse before sending it. */
export function PublishReelForm({ uploadMaxBytes }: { uploadMaxBytes: number }) {
  const router = useRouter();
  const queryClient = useQueryClient();
  const accounts = useQuery({ queryKey: reelKeys.accounts, queryFn: fetchAccounts, staleTime: 60_000 });
  const [accountId, setAccountId] = useState("");
  const [videoUrl, setVideoUrl] = useState("");
  const [source, setSource] = useState<"url" | "file">("url");
  const [upload, setUpload] = useState<UploadedVideo | null>(null);
  const [filePreview, setFilePreview] = useState<string | null>(null);
  const [options, setOptions] = useState<ReelOptionsValue>(NO_REEL_OPTIONS);
  const [caption, setCaption] = useState("");
  const [shareToFeed, setShareToFeed] = useState(true);
  const [scheduled, setScheduled] = useState(false);
  const [publishAt, setPublishAt] = useState("");
  const [localErrors, setLocalErrors] = useState<Record<string, string>>({});
  // Fields changed since the last submission: their errors were about a value that is gone.
  const [edited, setEdited] = useState<ReadonlySet<string>>(() => new Set());
  const change =
    <T,>(field: string, set: (value: T) => void) =>
    (value: T) => {
      set(value);
      setEdited((fields) => (fields.has(field) ? fields : new Set(fields).add(field)));
    };
  const changeAccount = change("account_id", setAccountId);
  const changeVideoUrl = change("video_url", setVideoUrl);
  const changeCaption = change("caption", setCaption);
  const changePublishAt = change("publish_at", setPublishAt);
  const changeOption = (field: keyof ReelOptionsValue, next: Partial<ReelOptionsValue>) => {
    setOptions((current) => ({ ...current, ...next }));
    setEdited((fields) => new Set([...fields, ...OPTION_PARAMETERS[field]]));
  };
  const videoSrc = source === "file" ? filePreview : /^https?:\/\/\S+$/i.test(videoUrl.trim()) ? videoUrl.trim() : null;
  const account = accounts.data?.data.find((a) => a.account_id === accountId) ?? accounts.data?.data[0];

  const submit = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      fetchJson<{ publication_id: string; status: string }>("/v1/reels", { method: "POST", json: body }),
    onSuccess: (publication) => {
      void queryClient.invalidateQueries({ queryKey: reelKeys.list });
      router.push(`/dashboard/reels/${publication.publication_id}`);
    },
  });

  const serverErrors = submit.error instanceof ProblemError ? submit.error.fieldErrors() : {};
  const errors = Object.fromEntries(
    // A part's error (collaborators.1) goes with its field.
    Object.entries({ ...serverErrors, ...localErrors }).filter(([field]) => !edited.has(field.split(".")[0]!)),
  );
  const fields = ["account_id", "video_url", "upload_id", "caption", "share_to_feed", "publish_at"];
  const formError =
    submit.error && !fields.some((f) => serverErrors[f]) && !hasReelOptionError(serverErrors)
      ? errorMessage(submit.error)
      : undefined;
  const count = countCaption(caption).chars;

  const onSubmit = (event: React.FormEvent) => {
    event.preventDefault();
    const local: Record<string, string> = {};
    let at: string | undefined;
    if (scheduled) {
      const date = new Date(publishAt);
      if (!publishAt || Number.isNaN(date.getTime()))
        local.publish_at = "Pick a date and time, or turn scheduling off.";
      else at = date.toISOString();
    }
    if (source === "file" && !upload) local.upload_id = "Pick a video file and wait for its upload to finish.";
    setLocalErrors(local);
    setEdited(new Set());
    if (Object.keys(local).length > 0) return;
    submit.mutate({
      account_id: account?.account_id ?? "",
      ...(source === "file" ? { upload_id: upload?.upload_id ?? "" } : { video_url: videoUrl.trim() }),
      ...(caption ? { caption } : {}),
      share_to_feed: shareToFeed,
      ...reelOptionsBody(options),
      ...(at ? { publish_at: at } : {}),
    });
  };

  return (
    <form noValidate aria-label="Publish a reel" className="space-y-5" onSubmit={onSubmit}>
      <Field
        label="Account"
        error={errors.account_id ?? (accounts.isError ? errorMessage(accounts.error) : undefined)}
        hint={account?.sandbox ? "Sandbox account: publishes to the built-in Graph sandbox." : undefined}
      >
        {(control) => (
          <Select
            {...control}
            name="account_id"
            value={account?.account_id ?? ""}
            onChange={(e) => changeAccount(e.target.value)}
            disabled={accounts.isPending}
          >
            {accounts.isPending && <option value="">Loading accounts…</option>}
            {accounts.data?.data.length === 0 && <option value="">No accounts for this tenant</option>}
            {accounts.data?.data.map((a) => (
              <option key={a.account_id} value={a.account_id}>
                {a.username ? `@${a.username} · ` : ""}
                {a.account_id}
                {a.sandbox ? " (sandbox)" : ""}
              </option>
            ))}
          </Select>
        )}
      </Field>

      <fieldset>
        <legend className="text-sm font-medium text-zinc-800 dark:text-zinc-200">Video</legend>
        <div
          className="mt-2 inline-flex rounded-lg border border-zinc-300 p-0.5 dark:border-zinc-700"
          role="radiogroup"
          aria-label="Video source"
        >
          {(["url", "file"] as const).map((option) => (
            <button
              key={option}
              type="button"
              role="radio"
              aria-checked={source === option}
              onClick={() => setSource(option)}
              className={cx(
                "min-h-11 rounded-md px-3 py-1 text-xs font-medium sm:min-h-0",
                focusRing,
                source === option
                  ? "bg-indigo-600 text-white"
                  : "text-zinc-700 hover:bg-zinc-50 dark:text-zinc-300 dark:hover:bg-zinc-800",
              )}
            >
              {option === "url" ? "From a URL" : "From a file"}
            </button>
          ))}
        </div>
      </fieldset>

      {source === "file" ? (
        <Field
          label="Video file"
          error={errors.upload_id}
          hint="An MP4 or MOV from this computer: H.264 or HEVC, 3 s – 15 min, 23–60 fps."
        >
          {(control) => (
            <VideoFilePicker
              control={control}
              maxBytes={uploadMaxBytes}
              onChange={setUpload}
              onPreview={setFilePreview}
            />
          )}
        </Field>
      ) : (
        <Field
          label="Video URL"
          error={errors.video_url}
          hint="A public MP4 or MOV: H.264 or HEVC, 3 s – 15 min, 23–60 fps."
        >
          {(control) => (
            <Input
              {...control}
              name="video_url"
              type="url"
              inputMode="url"
              placeholder="https://cdn.example.com/reel.mp4"
              value={videoUrl}
              onChange={(e) => changeVideoUrl(e.target.value)}
            />
          )}
        </Field>
      )}

      {source === "url" && <VideoPreview url={videoUrl.trim()} />}

      {account?.sandbox && source === "url" && (
        <fieldset>
          <legend className="text-xs font-medium text-zinc-600 dark:text-zinc-400">Or use a sample</legend>
          <div className="mt-2 flex flex-wrap gap-2">
            {SAMPLES.map((sample) => {
              const url =
                typeof window === "undefined"
                  ? `/samples/${sample.file}`
                  : `${window.location.origin}/samples/${sample.file}`;
              const active = videoUrl === url;
              return (
                <button
                  key={sample.file}
                  type="button"
                  title={sample.note}
                  aria-pressed={active}
                  onClick={() => changeVideoUrl(url)}
                  className={cx(
                    "min-h-11 rounded-full border px-3 py-1 text-xs font-medium transition-colors sm:min-h-0",
                    focusRing,
                    active
                      ? "border-indigo-500 bg-indigo-50 text-indigo-700 dark:bg-indigo-950 dark:text-indigo-300"
                      : "border-zinc-300 text-zinc-700 hover:bg-zinc-50 dark:border-zinc-700 dark:text-zinc-300 dark:hover:bg-zinc-800",
                  )}
                >
                  {sample.label}
                </button>
              );
            })}
          </div>
        </fieldset>
      )}

      <Field
        label="Caption"
        error={errors.caption}
        aside={
          <span
            className={cx(
              "text-xs tabular-nums",
              count > MAX_CAPTION_CHARS
                ? "font-medium text-red-600 dark:text-red-400"
                : "text-zinc-500 dark:text-zinc-400",
            )}
            data-testid="caption-count"
            aria-live="polite"
          >
            {count.toLocaleString("en-US")} / {MAX_CAPTION_CHARS.toLocaleString("en-US")}
          </span>
        }
      >
        {(control) => (
          <Textarea
            {...control}
            name="caption"
            rows={3}
            placeholder="Say something about it. #hashtags work."
            value={caption}
            onChange={(e) => changeCaption(e.target.value)}
          />
        )}
      </Field>

      <div className="space-y-4 rounded-lg border border-zinc-200 p-4 dark:border-zinc-800">
        <Toggle
          checked={shareToFeed}
          onChange={setShareToFeed}
          label="Share to feed"
          description="Also show the reel in the main feed, not only the Reels tab."
          error={errors.share_to_feed}
        />
        <Toggle
          checked={scheduled}
          onChange={setScheduled}
          label="Schedule"
          description="Publish later instead of now (up to 75 days ahead)."
        />
        {scheduled && (
          <Field
            label="Publish at"
            error={errors.publish_at}
            hint={
              <span data-testid="schedule-zone">
                In your time zone: {zoneLabel(publishAt ? new Date(publishAt) : new Date())}
              </span>
            }
          >
            {(control) => (
              <Input
                {...control}
                name="publish_at"
                type="datetime-local"
                value={publishAt}
                onChange={(e) => changePublishAt(e.target.value)}
              />
            )}
          </Field>
        )}
      </div>

      <ReelOptions value={options} onChange={changeOption} videoSrc={videoSrc} errors={errors} />

      {formError && <Alert title="The reel was not submitted">{formError}</Alert>}

      <div className="flex justify-end">
        <Button type="submit" loading={submit.isPending} disabled={accounts.isPending} className="w-full sm:w-auto">
          {scheduled ? "Schedule reel" : "Publish reel"}
        </Button>
      </div>
    </form>
  );
}

function Toggle({
  checked,
  onChange,
  label,
  description,
  error,
}: {
  checked: boolean;
  onChange: (value: boolean) => void;
  label: string;
  description: string;
  error?: string;
}) {
  const id = useId();
  return (
    <div>
      <div className="flex items-start justify-between gap-4">
        <div>
          <p className="text-sm font-medium text-zinc-800 dark:text-zinc-200" id={`${id}-label`}>
            {label}
          </p>
          <p className="text-xs text-zinc-600 dark:text-zinc-400" id={`${id}-description`}>
            {description}
          </p>
        </div>
        <button
          type="button"
          role="switch"
          aria-checked={checked}
          aria-labelledby={`${id}-label`}
          aria-describedby={`${id}-description`}
          onClick={() => onChange(!checked)}
          // The switch draws 24 px tall; the button around it is 44 px on phones, a thumb's width.
          className={cx("group inline-flex h-11 shrink-0 items-center rounded-full sm:h-6", focusRing)}
        >
          <span
            className={cx(
              "relative inline-flex h-6 w-11 rounded-full transition-colors",
              checked ? "bg-indigo-600" : "bg-zinc-400 dark:bg-zinc-600",
            )}
          >
            <span
              className={cx(
                "absolute top-0.5 left-0.5 size-5 rounded-full bg-white shadow-sm transition-transform",
                checked && "translate-x-5",
              )}
            />
          </span>
        </button>
      </div>
      {error && <p className="mt-1 text-sm text-red-600 dark:text-red-400">{error}</p>}
    </div>
  );
}

/** The video as it will be published, playing in the form before anything is sent. */
function VideoPreview({ url }: { url: string }) {
  const [broken, setBroken] = useState<string>();
  if (!/^https?:\/\/\S+$/i.test(url)) return null;
  return (
    <div className="space-y-1.5">
      <p className="text-xs font-medium text-zinc-600 dark:text-zinc-400">Preview</p>
      {broken === url ? (
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          This browser cannot play the video; Graph may still accept it.
        </p>
      ) : (
        <video
          key={url}
          data-testid="video-preview"
          className="aspect-[9/16] max-h-72 rounded-lg bg-zinc-950"
          src={`${url}#t=0.1`}
          controls
          muted
          playsInline
          preload="metadata"
          aria-label="Preview of the video"
          onError={() => setBroken(url)}
        />
      )}
    </div>
  );
}
