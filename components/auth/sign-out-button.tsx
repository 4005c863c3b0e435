"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { Button } from "../ui/button";

export function SignOutButton() {
  const router = useRouter();
  const queryClient = useQueryClient();
  const signOut = useMutation({
    mutationFn: () => fetch("/api/session", { method: "DELETE", credentials: "same-origin" }),
    onSettled: () => {
      queryClient.clear();
      router.replace("/sign-in");
      router.refresh();
    },
  });
  return (
    <Button variant="ghost" size="sm" loading={signOut.isPending} onClick={() => signOut.mutate()}>
      Sign out
    </Button>
  );
}
