/** The Graph-compatible sandbox: what the route handler, start-up and tests use. */
export { handleGraphRequest, isServedVersion, type GraphRouteOptions } from "./handle-graph-request";
export { resumeSandboxProcessing, sweepVideoFiles } from "./resume-processing";
export { settleSandboxProcessing } from "./process-container";
export { SANDBOX_HOST_SEGMENTS, type SandboxHost } from "./sandbox-hosts";
export { DEFAULT_LIMITS, type SandboxDeps, type SandboxLimits } from "./deps";
