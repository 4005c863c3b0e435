"use client";

import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { ProblemError } from "./api";

export function Providers({ children }: { children: React.ReactNode }) {
  const router = useRouter();
  const [client] = useState(() => {
    // An expired or cleared session sends the person back to sign in instead of showing broken pages.
    const onError = (error: unknown) => {
      if (error instanceof ProblemError && error.status === 401 && window.location.pathname !== "/sign-in") {
        router.replace(`/sign-in?next=${encodeURIComponent(window.location.pathname + window.location.search)}`);
      }
    };
    return new QueryClient({
      queryCache: new QueryCache({ onError }),
      mutationCache: new MutationCache({ onError }),
      defaultOptions: {
        queries: {
          staleTime: 5_000,
          retry: (failures, error) => !(error instanceof ProblemError && error.status < 500) && failures < 2,
        },
      },
    });
  });
  return <QueryClientProvider client={client}>{children}</QueryClientProvider>;
}
