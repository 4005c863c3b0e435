"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useRef, useState } from "react";
import { MAX_TOKENS, TEMPERATURE } from "@/lib/jobs/status";
import { errorMessage, fetchJson, ProblemError } from "../api";
import { formatNumber } from "../format";
import { Button } from "../ui/button";
import { Field } from "../ui/field";
import { Input } from "../ui/input";
import { Select } from "../ui/select";
import { Textarea } from "../ui/textarea";
import { Alert } from "../ui/states";
import { DEFAULT_JOB_FORM, newJobId, recallJobForm, rememberJobForm, type JobFormValues } from "./form-memory";
import { fetchModels, jobQueries } from "./queries";

interface Submitted {
  job_id: string;
  status: string;
  stream_url: string;
}

// Empty means "use the server's default" (the one the field shows); anything else goes as typed so the server can say what is wrong with it.
const numberOrUndefined = (value: string) => (value.trim() === "" ? undefined : Number(value));

export function NewJobForm({ tenantId }: { tenantId: string }) {
  const router = useRouter();
  const queryClient = useQueryClient();
  const models = useQuery({ queryKey: jobQueries.models, queryFn: fetchModels, staleTime: Infinity });
  const [values, setValues] = useState<JobFormValues>(DEFAULT_JOB_FORM);
  const [recalled, setRecalled] = useState(false);
  const [localErrors, setLocalErrors] = useState<Record<string, string>>({});
  // Set on submit, before React re-renders the button disabled: a double click sends once.
  const sending = useRef(false);

  // Read after mounting: the server render knows nothing of this browser's storage.
  useEffect(() => {
    const memory = recallJobForm(tenantId);
    // eslint-disable-next-line react-hooks/set-state-in-effect -- storage is only readable after hydration
    if (memory) setValues(memory);
    setRecalled(true);
  }, [tenantId]);
  useEffect(() => {
    if (recalled) rememberJobForm(tenantId, values);
  }, [recalled, tenantId, values]);

  const set = (field: keyof JobFormValues) => (value: string) => setValues((v) => ({ ...v, [field]: value }));
  const modelName = values.model || models.data?.data[0]?.id || "";
  const selected = models.data?.data.find((m) => m.id === modelName);

  const submit = useMutation({
    mutationFn: (body: Record<string, unknown>) => fetchJson<Submitted>("/v1/jobs", { method: "POST", json: body }),
    onSuccess: (job) => {
      void queryClient.invalidateQueries({ queryKey: jobQueries.list });
      router.push(`/dashboard/jobs/${job.job_id}`);
    },
    onError: () => {
      sending.current = false;
    },
  });
  const busy = submit.isPending || submit.isSuccess;
  const errors = { ...(submit.error instanceof ProblemError ? submit.error.fieldErrors() : {}), ...localErrors };
  const known = ["prompt", "model_name", "temperature", "max_tokens"];
  const formError = submit.error && !known.some((k) => errors[k]) ? errorMessage(submit.error) : undefined;

  const onSubmit = (event: React.FormEvent) => {
    event.preventDefault();
    if (sending.current) return;
    const local: Record<string, string> = {};
    if (values.prompt.trim() === "")
      local.prompt = values.prompt === "" ? "Enter a prompt" : "Enter a prompt: only spaces is no prompt";
    setLocalErrors(local);
    if (Object.keys(local).length > 0) {
      submit.reset();
      return;
    }
    sending.current = true;
    submit.mutate({
      job_id: newJobId(),
      tenant_id: tenantId,
      model_name: modelName,
      prompt: values.prompt,
      temperature: numberOrUndefined(values.temperature),
      max_tokens: numberOrUndefined(values.maxTokens),
    });
  };

  return (
    <form noValidate aria-label="New generation job" className="space-y-5" onSubmit={onSubmit} aria-busy={busy}>
      <Field label="Prompt" error={errors.prompt} hint="The model continues this text.">
        {(control) => (
          <Textarea
            {...control}
            name="prompt"
            rows={6}
            placeholder="Kafka keeps every event of a topic in order per partition, so"
            value={values.prompt}
            readOnly={busy}
            onChange={(event) => set("prompt")(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === "Enter" && (event.metaKey || event.ctrlKey)) event.currentTarget.form?.requestSubmit();
            }}
          />
        )}
      </Field>

      <Field
        label="Model"
        error={errors.model_name ?? (models.isError ? errorMessage(models.error) : undefined)}
        hint={selected?.description}
      >
        {(control) => (
          <Select
            {...control}
            name="model_name"
            value={modelName}
            onChange={(event) => set("model")(event.target.value)}
            disabled={models.isPending || busy}
          >
            {models.isPending && <option value="">Loading models…</option>}
            {models.data?.data.map((m) => (
              <option key={m.id} value={m.id}>
                {m.id}
              </option>
            ))}
          </Select>
        )}
      </Field>

      <div className="grid grid-cols-2 gap-4">
        <Field label="Temperature" error={errors.temperature} hint={`${TEMPERATURE.min} – ${TEMPERATURE.max}`}>
          {(control) => (
            <Input
              {...control}
              name="temperature"
              type="number"
              inputMode="decimal"
              step="0.1"
              min={TEMPERATURE.min}
              max={TEMPERATURE.max}
              placeholder={String(TEMPERATURE.default)}
              readOnly={busy}
              value={values.temperature}
              onChange={(event) => set("temperature")(event.target.value)}
            />
          )}
        </Field>
        <Field
          label="Max tokens"
          error={errors.max_tokens}
          hint={`${formatNumber(MAX_TOKENS.min)} – ${formatNumber(MAX_TOKENS.max)}; empty means ${formatNumber(MAX_TOKENS.default)}`}
        >
          {(control) => (
            <Input
              {...control}
              name="max_tokens"
              type="number"
              inputMode="numeric"
              step="1"
              min={MAX_TOKENS.min}
              max={MAX_TOKENS.max}
              placeholder={String(MAX_TOKENS.default)}
              readOnly={busy}
              value={values.maxTokens}
              onChange={(event) => set("maxTokens")(event.target.value)}
            />
          )}
        </Field>
      </div>

      {formError && <Alert title="The job was not submitted">{formError}</Alert>}

      <div className="flex items-center justify-between gap-3">
        <p className="hidden text-xs text-zinc-600 sm:block dark:text-zinc-400">
          <kbd className="rounded border border-zinc-300 px-1 font-sans dark:border-zinc-700">Ctrl</kbd> +{" "}
          <kbd className="rounded border border-zinc-300 px-1 font-sans dark:border-zinc-700">Enter</kbd> to submit
        </p>
        <Button type="submit" loading={busy} className="w-full sm:w-auto">
          Generate
        </Button>
      </div>
    </form>
  );
}
