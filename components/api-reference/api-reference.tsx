"use client";

import { useEffect, useRef } from "react";

interface ScalarGlobal {
  createApiReference(element: HTMLElement, configuration: Record<string, unknown>): { destroy?: () => void };
}

declare global {
  interface Window {
    Scalar?: ScalarGlobal;
  }
}

let loading: Promise<ScalarGlobal> | undefined;

/** Loads Scalar's standalone bundle once per page load, from this server. */
function loadScalar(src: string): Promise<ScalarGlobal> {
  loading ??= new Promise((resolve, reject) => {
    if (window.Scalar) return resolve(window.Scalar);
    const script = document.createElement("script");
    script.src = src;
    script.async = true;
    script.onload = () => (window.Scalar ? resolve(window.Scalar) : reject(new Error("Scalar did not load")));
    script.onerror = () => {
      loading = undefined;
      reject(new Error("Scalar did not load"));
    };
    document.head.appendChild(script);
  });
  return loading;
}

/** The API reference, rendered by Scalar from the OpenAPI document; nothing is fetched from elsewhere. */
export function ApiReference({ documentUrl, scriptUrl }: { documentUrl: string; scriptUrl: string }) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let reference: { destroy?: () => void } | undefined;
    let cancelled = false;
    loadScalar(scriptUrl).then(
      (scalar) => {
        if (cancelled || !container.current) return;
        reference = scalar.createApiReference(container.current, {
          url: documentUrl,
          withDefaultFonts: false,
          telemetry: false,
          agent: { disabled: true },
          mcp: { disabled: true },
          hideClientButton: true,
          showDeveloperTools: "never",
          documentDownloadType: "json",
        });
        // Scalar renders a <main> of its own inside the dashboard's: one page, one main landmark.
        const demote = () =>
          container.current?.querySelectorAll("main").forEach((main) => {
            main.setAttribute("role", "region");
            main.setAttribute("aria-label", "API reference");
          });
        demote();
        const observer = new MutationObserver(demote);
        observer.observe(container.current, { childList: true, subtree: true });
        const destroy = reference.destroy?.bind(reference);
        reference = { destroy: () => (observer.disconnect(), destroy?.()) };
      },
      () => {
        if (container.current)
          container.current.textContent =
            "The API reference could not be loaded; the document itself is at " + documentUrl;
      },
    );
    return () => {
      cancelled = true;
      reference?.destroy?.();
    };
  }, [documentUrl, scriptUrl]);
  return <div ref={container} data-testid="api-reference" className="min-h-[60vh]" />;
}
