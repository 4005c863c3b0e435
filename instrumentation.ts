/**
 * Next.js start-up hook: guards every request before Next sees it (lib/request-guard.ts), and
 * resumes sandbox processing that a previous web-server process left IN_PROGRESS.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { guardRequests } = await import("./lib/request-guard");
  guardRequests();
  const { getServices } = await import("./lib/services");
  const { resumeSandboxProcessing } = await import("./lib/reels/sandbox/resume-processing");
  const { createLog } = await import("./lib/log");
  const log = createLog("web");
  const warn = (error: unknown) => log("warn", "sandbox resume failed", { error: error instanceof Error ? error.message : String(error) });
  // Not awaited: start-up does not wait on Redis, and a read of a stale container resumes it anyway.
  try {
    const { config, sandbox } = getServices();
    if (config.GRAPH_SANDBOX) resumeSandboxProcessing(sandbox).catch(warn);
  } catch (error) {
    warn(error);
  }
}
