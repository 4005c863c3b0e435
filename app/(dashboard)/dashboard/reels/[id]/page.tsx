import type { Metadata } from "next";
import Link from "next/link";
import { PageHeader } from "@/components/page-header";
import { PublicationLive } from "@/components/reels/publication-live";

export const metadata: Metadata = { title: "Publication" };

export default async function PublicationPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return (
    <>
      <Link href="/dashboard/reels" className="mb-3 inline-flex items-center gap-1 text-sm text-zinc-500 hover:text-zinc-900 dark:text-zinc-400 dark:hover:text-white">
        <span aria-hidden="true">←</span> Reels
      </Link>
      <PageHeader title="Publication" description={<span className="font-mono text-xs">{id}</span>} />
      <PublicationLive publicationId={id} />
    </>
  );
}
