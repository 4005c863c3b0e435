import Link from "next/link";
import { PageHeader } from "../page-header";
import { buttonStyles } from "../ui/button";
import { Card, CardBody } from "../ui/card";

/** What a login through Meta ended with when it connected nothing (or not everything), and the way back. */
export function LoginOutcome({ title, detail }: { title: string; detail: string }) {
  return (
    <>
      <PageHeader title={title} />
      <Card className="max-w-2xl">
        <CardBody className="flex gap-3 py-5">
          <span
            aria-hidden="true"
            className="mt-0.5 flex size-6 shrink-0 items-center justify-center rounded-full bg-amber-100 text-sm font-semibold text-amber-800 dark:bg-amber-950 dark:text-amber-300"
          >
            !
          </span>
          <p id="login-outcome" data-testid="login-outcome" className="text-sm text-zinc-700 dark:text-zinc-300">
            {detail}
          </p>
        </CardBody>
        <div className="flex flex-wrap gap-3 border-t border-zinc-100 px-5 py-4 dark:border-zinc-800">
          <Link href="/dashboard/accounts" className={buttonStyles()}>
            Back to Accounts
          </Link>
        </div>
      </Card>
    </>
  );
}
