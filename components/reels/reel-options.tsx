"use client";

import { useState } from "react";
import { GRADUATION_STRATEGIES, REEL_PARAMETER_LIMITS, REEL_PARAMETER_NAMES } from "@/lib/graph/reel-parameter-limits";
import { Field } from "../ui/field";
import { Input } from "../ui/input";
import { Select } from "../ui/select";
import { CoverPicker, type CoverChoice } from "./cover-picker";

/** The further reel parameters as the form holds them: text as typed, turned into the API's values on submit. */
export interface ReelOptionsValue {
  cover: CoverChoice;
  coverUrl: string;
  thumbOffsetMs: number;
  audioName: string;
  collaborators: string;
  userTags: string;
  locationId: string;
  trial: "" | (typeof GRADUATION_STRATEGIES)[number];
}

export const NO_REEL_OPTIONS: ReelOptionsValue = {
  cover: "default",
  coverUrl: "",
  thumbOffsetMs: 0,
  audioName: "",
  collaborators: "",
  userTags: "",
  locationId: "",
  trial: "",
};

/** The API parameter each of the further options' inputs sets, so an edit clears that parameter's error. */
export const OPTION_PARAMETERS: Record<keyof ReelOptionsValue, string[]> = {
  cover: ["cover_url", "thumb_offset"],
  coverUrl: ["cover_url"],
  thumbOffsetMs: ["thumb_offset"],
  audioName: ["audio_name"],
  collaborators: ["collaborators"],
  userTags: ["user_tags"],
  locationId: ["location_id"],
  trial: ["trial_params"],
};

const TRIAL_LABELS: Record<(typeof GRADUATION_STRATEGIES)[number], string> = {
  MANUAL: "Trial reel: I graduate it from the Instagram app",
  SS_PERFORMANCE: "Trial reel: it graduates by itself when it performs well",
};

/** "@ana, bo.b  carl" → ["ana", "bo.b", "carl"]: people type names the way Instagram shows them. */
export function usernamesOf(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((name) => name.replace(/^@/, ""))
    .filter(Boolean);
}

/** The parameters the API takes for what was chosen; nothing for what was left alone. */
export function reelOptionsBody(value: ReelOptionsValue): Record<string, unknown> {
  const collaborators = usernamesOf(value.collaborators);
  const tagged = usernamesOf(value.userTags);
  return {
    ...(value.cover === "url" && value.coverUrl.trim() ? { cover_url: value.coverUrl.trim() } : {}),
    ...(value.cover === "frame" ? { thumb_offset: value.thumbOffsetMs } : {}),
    ...(value.audioName.trim() ? { audio_name: value.audioName.trim() } : {}),
    ...(collaborators.length > 0 ? { collaborators } : {}),
    ...(tagged.length > 0 ? { user_tags: tagged.map((username) => ({ username })) } : {}),
    ...(value.locationId.trim() ? { location_id: value.locationId.trim() } : {}),
    ...(value.trial ? { trial_params: { graduation_strategy: value.trial } } : {}),
  };
}

/** A field's error, or the first one about a part of it (the server names `collaborators.1`, `user_tags.0.username`). */
export function errorFor(errors: Record<string, string>, name: string): string | undefined {
  return errors[name] ?? Object.entries(errors).find(([path]) => path.startsWith(`${name}.`))?.[1];
}

export const hasReelOptionError = (errors: Record<string, string>) =>
  REEL_PARAMETER_NAMES.some((name) => errorFor(errors, name) !== undefined);

/**
 * Cover, audio, collaborators, tags, location and trial settings, folded away under "More options"
 * so the form stays short; it opens by itself when one of them has an error.
 */
export function ReelOptions({
  value,
  onChange,
  videoSrc,
  errors,
}: {
  value: ReelOptionsValue;
  onChange: (field: keyof ReelOptionsValue, next: Partial<ReelOptionsValue>) => void;
  /** The video as the browser can play it (its URL, or the picked file), for choosing a frame. */
  videoSrc: string | null;
  errors: Record<string, string>;
}) {
  const [open, setOpen] = useState(false);
  const text = (field: "audioName" | "collaborators" | "userTags" | "locationId") => ({
    value: value[field],
    onChange: (e: React.ChangeEvent<HTMLInputElement>) =>
      onChange(field, { [field]: e.target.value } as Partial<ReelOptionsValue>),
  });
  return (
    <details
      className="group rounded-lg border border-zinc-200 dark:border-zinc-800"
      open={open || hasReelOptionError(errors)}
      onToggle={(e) => setOpen(e.currentTarget.open)}
    >
      <summary className="flex min-h-11 cursor-pointer items-center px-4 text-sm font-medium text-zinc-800 select-none dark:text-zinc-200">
        More options
        <span className="ml-2 text-xs font-normal text-zinc-600 dark:text-zinc-400">
          cover, audio, collaborators, tags, location, trial
        </span>
      </summary>
      <div className="space-y-5 border-t border-zinc-200 p-4 dark:border-zinc-800">
        <CoverPicker
          value={value}
          onChange={onChange}
          videoSrc={videoSrc}
          errors={{ thumb_offset: errorFor(errors, "thumb_offset"), cover_url: errorFor(errors, "cover_url") }}
        />
        <Field
          label="Audio name"
          error={errorFor(errors, "audio_name")}
          hint="Names the reel's original audio; it can be renamed only once."
        >
          {(control) => <Input {...control} name="audio_name" maxLength={120} {...text("audioName")} />}
        </Field>
        <Field
          label="Collaborators"
          error={errorFor(errors, "collaborators")}
          hint={`Up to ${REEL_PARAMETER_LIMITS.maxCollaborators} Instagram usernames, separated by commas; each is invited to co-author the reel.`}
        >
          {(control) => (
            <Input
              {...control}
              name="collaborators"
              placeholder="@ana, @bob"
              autoComplete="off"
              {...text("collaborators")}
            />
          )}
        </Field>
        <Field
          label="Tag people"
          error={errorFor(errors, "user_tags")}
          hint={`Up to ${REEL_PARAMETER_LIMITS.maxUserTags} Instagram usernames, separated by commas.`}
        >
          {(control) => (
            <Input {...control} name="user_tags" placeholder="@carla" autoComplete="off" {...text("userTags")} />
          )}
        </Field>
        <Field
          label="Location ID"
          error={errorFor(errors, "location_id")}
          hint="The id of a Facebook Page that has a location."
        >
          {(control) => <Input {...control} name="location_id" inputMode="numeric" {...text("locationId")} />}
        </Field>
        <Field
          label="Trial reel"
          error={errorFor(errors, "trial_params")}
          hint="A trial reel is shown to people who do not follow the account first."
        >
          {(control) => (
            <Select
              {...control}
              name="trial_params"
              value={value.trial}
              onChange={(e) => onChange("trial", { trial: e.target.value as ReelOptionsValue["trial"] })}
            >
              <option value="">Not a trial reel</option>
              {GRADUATION_STRATEGIES.map((strategy) => (
                <option key={strategy} value={strategy}>
                  {TRIAL_LABELS[strategy]}
                </option>
              ))}
            </Select>
          )}
        </Field>
      </div>
    </details>
  );
}
