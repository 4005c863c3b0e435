"use client";

import { useEffect, useRef, useState } from "react";
import { cx } from "../ui/cx";
import { focusRing } from "../ui/button";
import type { Problem } from "../api";
import type { ControlProps } from "../ui/field";
import { uploadTooLargeMessage } from "@/lib/uploads/upload-limit";

export interface UploadedVideo {
  upload_id: string;
  size: number;
}

type UploadState =
  | { phase: "idle" }
  | { phase: "uploading"; sent: number; total: number }
  | { phase: "done"; upload: UploadedVideo }
  | { phase: "failed"; message: string };

const formatSize = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1024))} KB`;

/**
 * A local video for a reel: picked, previewed from the disk, and sent to POST /v1/uploads at once
 * with XMLHttpRequest, whose upload progress events are the reliable way to show how far it got.
 * A file over the server's limit is refused here, with the server's words, and never sent: the
 * server would refuse it anyway, after the user waited for a transfer of up to UPLOAD_MAX_BYTES.
 */
export function VideoFilePicker({
  control,
  maxBytes,
  onChange,
  onPreview,
}: {
  control: ControlProps;
  /** UPLOAD_MAX_BYTES. */
  maxBytes: number;
  onChange: (upload: UploadedVideo | null) => void;
  /** The picked file as the browser plays it (an object URL), e.g. to choose a cover frame; null when none. */
  onPreview?: (url: string | null) => void;
}) {
  const [file, setFile] = useState<File | null>(null);
  const [preview, setPreview] = useState<string | null>(null);
  const [state, setState] = useState<UploadState>({ phase: "idle" });
  const request = useRef<XMLHttpRequest | null>(null);

  const previewUrl = useRef<string | null>(null);

  useEffect(
    () => () => {
      request.current?.abort();
      if (previewUrl.current) URL.revokeObjectURL(previewUrl.current);
      onPreview?.(null);
    },
    // Once, on unmount: the URL it revokes is the one the last pick made.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [],
  );

  const pick = (picked: File | null) => {
    request.current?.abort();
    if (previewUrl.current) URL.revokeObjectURL(previewUrl.current);
    // The preview plays the file from the disk, not the uploaded copy.
    previewUrl.current = picked ? URL.createObjectURL(picked) : null;
    setPreview(previewUrl.current);
    onPreview?.(previewUrl.current);
    setFile(picked);
    onChange(null);
    if (!picked) {
      setState({ phase: "idle" });
      return;
    }
    if (picked.size > maxBytes) {
      setState({ phase: "failed", message: uploadTooLargeMessage(maxBytes) });
      return;
    }
    const xhr = new XMLHttpRequest();
    request.current = xhr;
    xhr.open("POST", "/v1/uploads");
    xhr.setRequestHeader("accept", "application/json");
    // The server decides what it accepts (MP4 or MOV); an unknown type is sent as MP4 for the probe to judge.
    xhr.setRequestHeader("content-type", picked.type === "video/quicktime" ? "video/quicktime" : "video/mp4");
    xhr.responseType = "json";
    xhr.upload.onprogress = (event) =>
      setState({ phase: "uploading", sent: event.loaded, total: event.lengthComputable ? event.total : picked.size });
    xhr.onload = () => {
      if (xhr.status === 201) {
        const upload = xhr.response as UploadedVideo;
        setState({ phase: "done", upload });
        onChange(upload);
      } else {
        const problem = xhr.response as Partial<Problem> | null;
        setState({
          phase: "failed",
          message: problem?.detail || problem?.title || `The server answered ${xhr.status}.`,
        });
      }
    };
    xhr.onerror = () =>
      setState({ phase: "failed", message: "Could not reach the server. Check your connection and try again." });
    setState({ phase: "uploading", sent: 0, total: picked.size });
    xhr.send(picked);
  };

  const percent =
    state.phase === "uploading"
      ? Math.floor((state.sent / Math.max(1, state.total)) * 100)
      : state.phase === "done"
        ? 100
        : 0;
  return (
    <div className="space-y-3">
      <input
        {...control}
        type="file"
        name="video_file"
        accept="video/mp4,video/quicktime,.mp4,.mov"
        onChange={(e) => pick(e.target.files?.[0] ?? null)}
        className={cx(
          "block w-full text-sm text-zinc-700 file:mr-3 file:rounded-md file:border-0 file:bg-indigo-50 file:px-3 file:py-1.5 file:text-sm file:font-medium file:text-indigo-700 hover:file:bg-indigo-100 dark:text-zinc-300 dark:file:bg-indigo-950 dark:file:text-indigo-300",
          focusRing,
        )}
      />
      {file && state.phase !== "idle" && (
        <div className="space-y-1">
          <div
            role="progressbar"
            aria-label="Upload progress"
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={percent}
            className="h-2 overflow-hidden rounded-full bg-zinc-200 dark:bg-zinc-800"
          >
            <div
              className={cx("h-full transition-[width]", state.phase === "failed" ? "bg-red-500" : "bg-indigo-600")}
              style={{ width: `${percent}%` }}
            />
          </div>
          <p
            className="text-xs text-zinc-500 tabular-nums dark:text-zinc-400"
            aria-live="polite"
            data-testid="upload-status"
          >
            {state.phase === "uploading" &&
              `Uploading ${file.name}: ${formatSize(state.sent)} of ${formatSize(state.total)} (${percent}%)`}
            {state.phase === "done" && `Uploaded ${file.name} (${formatSize(state.upload.size)})`}
            {state.phase === "failed" && `Upload of ${file.name} failed`}
          </p>
        </div>
      )}
      {state.phase === "failed" && (
        <p className="text-sm text-red-600 dark:text-red-400" role="alert">
          {state.message}
        </p>
      )}
      {preview && (
        <video
          className="aspect-[9/16] max-h-72 rounded-lg bg-zinc-950 object-contain"
          src={preview}
          controls
          muted
          playsInline
          preload="metadata"
          aria-label="Preview of the picked video"
          data-testid="upload-preview"
        />
      )}
    </div>
  );
}
