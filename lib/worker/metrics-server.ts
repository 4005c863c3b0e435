import type { Admin, Kafka } from "kafkajs";
import http from "node:http";
import { ApiError, toProblem } from "../errors";
import { checkReadiness, readinessResponse, type Readiness } from "../health";
import type { Log } from "../log";
import { assertMetricsAccess, metricsResponse } from "../metrics-endpoint";
import { observeBroker } from "../metrics";
import type { WorkerClients } from "./worker-clients";
import { servesHost, servedHostNames } from "../net/served-hosts";

export interface OperationsServerOptions {
  port: number;
  host?: string;
  token?: string;
  /** The Host names it answers (lib/net/served-hosts.ts), as the web server does; unset: any. */
  servedHosts?: ReadonlySet<string>;
  readiness: () => Promise<Readiness>;
  log: Log;
}

export interface OperationsServer {
  /** The port it listens on (the one asked for, or the one the system chose for 0 in tests). */
  port: number;
  close(): Promise<void>;
}

/**
 * A worker's small HTTP server: GET /metrics, /api/health/live and /api/health/ready, the same
 * paths as on the web server, so one probe and one scrape configuration fit both. A port already
 * taken is logged and the worker runs on without it: its jobs matter more than its metrics.
 */
export async function startOperationsServer(options: OperationsServerOptions): Promise<OperationsServer | undefined> {
  const server = http.createServer((request, response) => {
    void answer(request, options)
      .catch(problem)
      .then((answer) => send(response, answer))
      .catch(() => response.destroy());
  });
  const listening = await new Promise<boolean>((resolve) => {
    server.once("error", (error) => {
      options.log("error", "the metrics and health port is not available; running without it", {
        port: options.port,
        error,
      });
      resolve(false);
    });
    server.listen(options.port, options.host, () => resolve(true));
  });
  if (!listening) return undefined;
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : options.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function answer(request: http.IncomingMessage, options: OperationsServerOptions): Promise<Response> {
  const path = (request.url ?? "/").split("?")[0];
  if (options.servedHosts && !servesHost(options.servedHosts, request.headers.host, request.socket.localAddress))
    return problem(new ApiError("misdirected", "This server does not answer for that Host; see ALLOWED_HOSTS."));
  const routes: Record<string, () => Promise<Response>> = {
    "/metrics": async () => {
      assertMetricsAccess(
        {
          authorization: request.headers.authorization ?? null,
          peer: request.socket.remoteAddress,
          forwardedFor: request.headers["x-forwarded-for"]?.toString() ?? null,
          site: {
            fetchSite: request.headers["sec-fetch-site"]?.toString() ?? null,
            origin: request.headers.origin ?? null,
            host: request.headers.host ?? null,
          },
        },
        options.token,
      );
      return metricsResponse();
    },
    "/api/health/live": async () => Response.json({ status: "ok" }),
    "/api/health/ready": async () => readinessResponse(await options.readiness()),
  };
  const route = routes[path];
  if (!route)
    return problem(new ApiError("not-found", "This port serves /metrics, /api/health/live and /api/health/ready."));
  if (request.method !== "GET" && request.method !== "HEAD")
    return problem(new ApiError("method-not-allowed", "Only GET is allowed here.", undefined, { Allow: "GET, HEAD" }));
  return route();
}

function problem(error: unknown): Response {
  const { problem, headers } = toProblem(error);
  return new Response(JSON.stringify(problem), {
    status: problem.status,
    headers: { "content-type": "application/problem+json", "cache-control": "no-store", ...headers },
  });
}

async function send(response: http.ServerResponse, answer: Response): Promise<void> {
  const body = Buffer.from(await answer.arrayBuffer());
  response.writeHead(answer.status, Object.fromEntries(answer.headers));
  response.end(response.req.method === "HEAD" ? undefined : body);
}

/**
 * The worker's metrics and health port (METRICS_PORT; 0: none). Ready once `consumersStarted`
 * says so and Redis and the broker answer.
 */
export async function startWorkerOperations(
  ctx: WorkerClients,
  consumersStarted: () => boolean,
): Promise<OperationsServer | undefined> {
  const { config } = ctx;
  if (config.METRICS_PORT === 0) return undefined;
  const admin = lazyAdmin(ctx.kafka);
  const server = await startOperationsServer({
    port: config.METRICS_PORT,
    host: config.HOST,
    token: config.METRICS_TOKEN,
    servedHosts: servedHostNames(config),
    log: ctx.log,
    readiness: () => checkReadiness({ redis: ctx.redis, admin: admin.get, consumersStarted }),
  });
  if (server)
    ctx.log("info", "metrics and health", { url: `http://${config.HOST ?? "0.0.0.0"}:${server.port}/metrics` });
  return server && { port: server.port, close: async () => void (await Promise.all([server.close(), admin.close()])) };
}

/** An admin client connected on first use, and again on the next use after it disconnected. */
function lazyAdmin(kafka: Kafka): { get: () => Promise<Admin>; close: () => Promise<void> } {
  let connecting: Promise<Admin> | undefined;
  return {
    get() {
      connecting ??= (async () => {
        const client = kafka.admin();
        observeBroker(client, "admin");
        await client.connect();
        client.on(client.events.DISCONNECT, () => (connecting = undefined));
        return client;
      })().catch((error) => {
        connecting = undefined;
        throw error;
      });
      return connecting;
    },
    async close() {
      // Stopping: a client that cannot close cleanly goes with the process.
      await connecting?.then((client) => client.disconnect()).catch(() => {});
    },
  };
}
