/** The Graph-compatible sandbox: what the route handler, start-up and tests use. */
export {
  handleGraphRequest,
  isSupportedVersion,
  SUPPORTED_GRAPH_VERSIONS,
  type GraphRouteOptions,
} from "./handle-graph-request";
export { resumeSandboxProcessing, sweepVideoFiles } from "./resume-processing";
export { settleSandboxProcessing } from "./process-container";
export { DEFAULT_LIMITS, type SandboxDeps, type SandboxLimits } from "./deps";
