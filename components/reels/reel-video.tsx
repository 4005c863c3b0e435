import type { PublishedPost } from "@/lib/reels/list-published-posts";
import { Time } from "../ui/time";

/** A published reel playing in place: muted so it may start without a click, inline on phones. */
export function ReelVideo({ post, autoPlay = false }: { post: PublishedPost; autoPlay?: boolean }) {
  return (
    <figure
      className="overflow-hidden rounded-xl border border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900"
      data-testid="published-reel"
      data-post-id={post.id}
    >
      <div className="bg-zinc-950">
        {post.media_url ? (
          <video
            className="mx-auto aspect-[9/16] max-h-[28rem] w-full object-contain"
            // Start at 0.1 s so the first frame shows as a poster before it plays.
            src={`${post.media_url}#t=0.1`}
            controls
            muted
            loop
            playsInline
            autoPlay={autoPlay}
            preload="metadata"
            aria-label={post.caption ? `Reel: ${post.caption}` : `Reel ${post.id}`}
          />
        ) : (
          <div className="flex aspect-[9/16] max-h-[28rem] items-center justify-center text-sm text-zinc-300">
            No video URL
          </div>
        )}
      </div>
      <figcaption className="space-y-1 px-4 py-3">
        {post.caption && (
          <p
            className="line-clamp-4 text-sm whitespace-pre-line text-zinc-800 dark:text-zinc-200"
            data-testid="reel-caption"
          >
            {post.caption}
          </p>
        )}
        <p className="flex flex-wrap items-center justify-between gap-2 text-xs text-zinc-600 dark:text-zinc-400">
          <span className="font-mono">{post.id}</span>
          <Time iso={post.timestamp ? post.timestamp.replace(/\+0000$/, "Z") : null} />
        </p>
        {post.permalink && (
          <a
            href={post.permalink}
            target="_blank"
            rel="noreferrer"
            className="inline-flex min-h-11 items-center text-xs font-medium text-indigo-700 hover:underline sm:min-h-0 dark:text-indigo-300"
          >
            Open permalink ↗
          </a>
        )}
      </figcaption>
    </figure>
  );
}
