import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { PageHeader } from "@/components/page-header";
import { PublicationLive } from "@/components/reels/publication-live";
import { parsePublicationId, readPublication } from "@/lib/reels/read-publication";
import { getServices } from "@/lib/web/services";
import { sessionTenant } from "../../../../session-tenant";

export const metadata: Metadata = { title: "Publication" };

/** A publication the session's tenant can see, or the not-found page (a real 404) for any other id. */
async function findPublication(id: string) {
  const tenant = await sessionTenant();
  let publicationId: string;
  try {
    publicationId = parsePublicationId(id);
  } catch {
    return undefined;
  }
  return tenant ? readPublication(getServices().redis, tenant, publicationId) : undefined;
}

export default async function PublicationPage({ params }: { params: Promise<{ id: string }> }) {
  const publication = await findPublication((await params).id);
  if (!publication) notFound();
  return (
    <>
      <Link
        href="/dashboard/reels"
        className="mb-3 inline-flex min-h-11 items-center gap-1 text-sm text-zinc-600 hover:text-zinc-900 sm:min-h-0 dark:text-zinc-400 dark:hover:text-white"
      >
        <span aria-hidden="true">←</span> Reels
      </Link>
      <PageHeader
        title="Publication"
        description={<span className="font-mono text-xs">{publication.publication_id}</span>}
      />
      <PublicationLive publicationId={publication.publication_id} initial={publication} />
    </>
  );
}
