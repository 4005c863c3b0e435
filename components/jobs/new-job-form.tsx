"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { errorMessage, fetchJson, ProblemError } from "../api";
import { Button } from "../ui/button";
import { Field } from "../ui/field";
import { Input } from "../ui/input";
import { Select } from "../ui/select";
import { Textarea } from "../ui/textarea";
import { Alert } from "../ui/states";
import { fetchModels, jobQueries } from "./queries";

interface Submitted {
  job_id: string;
  status: string;
  stream_url: string;
}

// Empty means "use the server's default"; anything else goes as typed so the server can say what is wrong with it.
const numberOrUndefined = (value: string) => (value.trim() === "" ? undefined : Number(value));

export function NewJobForm({ tenantId }: { tenantId: string }) {
  const router = useRouter();
  const queryClient = useQueryClient();
  const models = useQuery({ queryKey: jobQueries.models, queryFn: fetchModels, staleTime: Infinity });
  const [prompt, setPrompt] = useState("");
  const [model, setModel] = useState("");
  const [temperature, setTemperature] = useState("0.2");
  const [maxTokens, setMaxTokens] = useState("256");
  const modelName = model || models.data?.data[0]?.id || "";
  const selected = models.data?.data.find((m) => m.id === modelName);

  const submit = useMutation({
    mutationFn: () =>
      fetchJson<Submitted>("/v1/jobs", {
        method: "POST",
        json: { tenant_id: tenantId, model_name: modelName, prompt, temperature: numberOrUndefined(temperature), max_tokens: numberOrUndefined(maxTokens) },
      }),
    onSuccess: (job) => {
      void queryClient.invalidateQueries({ queryKey: jobQueries.list });
      router.push(`/dashboard/jobs/${job.job_id}`);
    },
  });
  const errors = submit.error instanceof ProblemError ? submit.error.fieldErrors() : {};
  const known = ["prompt", "model_name", "temperature", "max_tokens"];
  const formError = submit.error && !known.some((k) => errors[k]) ? errorMessage(submit.error) : undefined;

  return (
    <form
      noValidate
      aria-label="New generation job"
      className="space-y-5"
      onSubmit={(event) => {
        event.preventDefault();
        submit.mutate();
      }}
    >
      <Field label="Prompt" error={errors.prompt} hint="The model continues this text.">
        {(control) => (
          <Textarea
            {...control}
            name="prompt"
            rows={6}
            placeholder="Kafka keeps every event of a topic in order per partition, so"
            value={prompt}
            onChange={(event) => setPrompt(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === "Enter" && (event.metaKey || event.ctrlKey)) event.currentTarget.form?.requestSubmit();
            }}
          />
        )}
      </Field>

      <Field label="Model" error={errors.model_name ?? (models.isError ? errorMessage(models.error) : undefined)} hint={selected?.description}>
        {(control) => (
          <Select {...control} name="model_name" value={modelName} onChange={(event) => setModel(event.target.value)} disabled={models.isPending}>
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
        <Field label="Temperature" error={errors.temperature} hint="0 – 2">
          {(control) => (
            <Input {...control} name="temperature" type="number" inputMode="decimal" step="0.1" value={temperature} onChange={(event) => setTemperature(event.target.value)} />
          )}
        </Field>
        <Field label="Max tokens" error={errors.max_tokens} hint="1 – 32,768">
          {(control) => (
            <Input {...control} name="max_tokens" type="number" inputMode="numeric" step="1" value={maxTokens} onChange={(event) => setMaxTokens(event.target.value)} />
          )}
        </Field>
      </div>

      {formError && <Alert title="The job was not submitted">{formError}</Alert>}

      <div className="flex items-center justify-between gap-3">
        <p className="hidden text-xs text-zinc-500 sm:block dark:text-zinc-400">
          <kbd className="rounded border border-zinc-300 px-1 font-sans dark:border-zinc-700">Ctrl</kbd> +{" "}
          <kbd className="rounded border border-zinc-300 px-1 font-sans dark:border-zinc-700">Enter</kbd> to submit
        </p>
        <Button type="submit" loading={submit.isPending} className="w-full sm:w-auto">
          Generate
        </Button>
      </div>
    </form>
  );
}
