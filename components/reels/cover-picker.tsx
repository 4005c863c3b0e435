"use client";

import { useEffect, useRef, useState } from "react";
import { Field } from "../ui/field";
import { Input } from "../ui/input";
import type { ReelOptionsValue } from "./reel-options";

/** Instagram's own first frame, a frame of the video (thumb_offset), or a JPEG from a URL (cover_url). */
export type CoverChoice = "default" | "frame" | "url";

const CHOICES: { value: CoverChoice; label: string }[] = [
  { value: "default", label: "First frame" },
  { value: "frame", label: "A frame of the video" },
  { value: "url", label: "An image from a URL" },
];

/** Frames are picked a tenth of a second apart. */
const STEP_MS = 100;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
/** The last frame Graph accepts is just before the end: thumb_offset must be less than the duration. */
const lastFrameMs = (durationMs: number) => Math.max(0, Math.ceil(durationMs / STEP_MS) * STEP_MS - STEP_MS);

/** The reel's cover, with a preview: the image itself, or the video seeked to the chosen frame. */
export function CoverPicker({
  value,
  onChange,
  videoSrc,
  errors,
}: {
  value: ReelOptionsValue;
  onChange: (field: keyof ReelOptionsValue, next: Partial<ReelOptionsValue>) => void;
  videoSrc: string | null;
  errors: { thumb_offset?: string; cover_url?: string };
}) {
  return (
    <fieldset className="space-y-3">
      <legend className="text-sm font-medium text-zinc-800 dark:text-zinc-200">Cover</legend>
      <div className="flex flex-wrap gap-x-5 gap-y-2">
        {CHOICES.map((choice) => (
          <label key={choice.value} className="inline-flex min-h-11 items-center gap-2 text-sm sm:min-h-0">
            <input
              type="radio"
              name="cover"
              value={choice.value}
              checked={value.cover === choice.value}
              onChange={() => onChange("cover", { cover: choice.value })}
              // 44 px tall on a phone, so the radio itself is big enough to tap (WCAG 2.5.8), not only its label.
              className="h-11 w-4 accent-indigo-600 sm:size-4"
            />
            {choice.label}
          </label>
        ))}
      </div>
      {value.cover === "frame" && (
        <FramePicker
          // A new video is a new length to learn.
          key={videoSrc ?? ""}
          src={videoSrc}
          offsetMs={value.thumbOffsetMs}
          onOffset={(ms) => onChange("thumbOffsetMs", { thumbOffsetMs: ms })}
          error={errors.thumb_offset}
        />
      )}
      {value.cover === "url" && (
        <CoverUrl
          url={value.coverUrl}
          onUrl={(url) => onChange("coverUrl", { coverUrl: url })}
          error={errors.cover_url}
        />
      )}
    </fieldset>
  );
}

function FramePicker({
  src,
  offsetMs,
  onOffset,
  error,
}: {
  src: string | null;
  offsetMs: number;
  onOffset: (ms: number) => void;
  error: string | undefined;
}) {
  const video = useRef<HTMLVideoElement>(null);
  const [durationMs, setDurationMs] = useState<number | null>(null);
  const [broken, setBroken] = useState(false);
  const maxMs = durationMs === null ? 0 : lastFrameMs(durationMs);

  useEffect(() => {
    if (video.current && durationMs !== null) video.current.currentTime = offsetMs / 1000;
  }, [offsetMs, durationMs]);

  if (!src)
    return <p className="text-sm text-zinc-600 dark:text-zinc-400">Give the video first to pick one of its frames.</p>;
  return (
    <div className="space-y-3">
      <video
        ref={video}
        src={src}
        muted
        playsInline
        preload="auto"
        className="aspect-[9/16] max-h-56 rounded-lg bg-zinc-950"
        aria-label={`Cover preview: the frame at ${seconds(offsetMs)}`}
        data-testid="cover-frame-preview"
        onLoadedMetadata={(e) => {
          const ms = Math.floor(e.currentTarget.duration * 1000);
          if (!Number.isFinite(ms)) return;
          setDurationMs(ms);
          // A frame chosen in a longer video is past this one's end: take its last frame instead.
          if (offsetMs > lastFrameMs(ms)) onOffset(lastFrameMs(ms));
        }}
        onError={() => setBroken(true)}
      />
      <Field
        label="Cover frame"
        error={error}
        hint={
          broken
            ? "This browser cannot play the video, so it cannot show its frames; Graph may still accept it."
            : durationMs === null
              ? "Loading the video to learn its length…"
              : `At ${seconds(offsetMs)} of ${seconds(durationMs)}.`
        }
      >
        {(control) => (
          <input
            {...control}
            type="range"
            name="thumb_offset"
            min={0}
            max={maxMs}
            step={STEP_MS}
            value={Math.min(offsetMs, maxMs)}
            disabled={durationMs === null}
            aria-valuetext={seconds(offsetMs)}
            onChange={(e) => onOffset(Number(e.target.value))}
            className="w-full accent-indigo-600 disabled:opacity-50"
          />
        )}
      </Field>
    </div>
  );
}

function CoverUrl({ url, onUrl, error }: { url: string; onUrl: (url: string) => void; error: string | undefined }) {
  const [broken, setBroken] = useState<string>();
  const shown = url.trim();
  return (
    <div className="space-y-3">
      <Field label="Cover image URL" error={error} hint="A public JPEG of at most 8 MB.">
        {(control) => (
          <Input
            {...control}
            name="cover_url"
            type="url"
            inputMode="url"
            placeholder="https://cdn.example.com/cover.jpg"
            value={url}
            onChange={(e) => onUrl(e.target.value)}
          />
        )}
      </Field>
      {/^https?:\/\/\S+$/i.test(shown) &&
        (broken === shown ? (
          <p className="text-sm text-zinc-600 dark:text-zinc-400">This browser cannot show the image.</p>
        ) : (
          // eslint-disable-next-line @next/next/no-img-element -- any host's image, not one Next may optimise
          <img
            key={shown}
            src={shown}
            alt="Cover preview"
            data-testid="cover-image-preview"
            className="max-h-56 rounded-lg bg-zinc-100 object-contain dark:bg-zinc-900"
            onError={() => setBroken(shown)}
          />
        ))}
    </div>
  );
}
