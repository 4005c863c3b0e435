import type { Admin, Kafka, Producer } from "kafkajs";
import { KeyRing } from "./auth";
import { redisAuthThrottle, type AuthThrottle } from "./rate-limit";
import { loadSessionSecret, SessionStore } from "./sessions";
import { getConfig, type Config } from "../config";
import { createKafka, createProducer, ensureTopics } from "../kafka";
import { createLog, type Log } from "../log";
import { configureMetrics, observeBroker, observeRedis } from "../metrics";
import { OpenStreams } from "../stream/open-streams";
import { StreamHub } from "../stream/stream-hub";
import { createSubscriber, createWebRedis, type Redis } from "../redis";
import { configuredGraphHosts, type GraphHosts } from "../graph/hosts";
import { createGraphPacer, type GraphPacer } from "../graph/pacing";
import { ConnectedAccounts } from "../accounts/connected-accounts";
import { loadAccountsKey } from "../accounts/token-cipher";
import { createUploadUrls, type UploadUrls } from "../reels/upload-for-graph";

/**
 * The web server's long-lived clients, made once per process (kept on globalThis so the dev
 * server's module reloads do not open new connections). The worker's composition root is
 * lib/worker/services.ts.
 */
export interface Services {
  config: Config;
  keys: KeyRing;
  /** Dashboard sessions, in Redis. */
  sessions: SessionStore;
  /** Failed sign-ins and key checks per client address. */
  throttle: AuthThrottle;
  redis: Redis;
  kafka: Kafka;
  log: Log;
  /** A connected producer; reconnects on the next call after a failure. */
  producer(): Promise<Producer>;
  /** The process's one subscriber connection, shared by every stream client. */
  hub(): StreamHub;
  /** The SSE streams open in this process, at most MAX_STREAMS_PER_TENANT per tenant. */
  streams: OpenStreams;
  /** A connected admin client for health and lag; connects again on the next call after a failure. */
  admin(): Promise<Admin>;
  /** Graph per host (GRAPH_URL, or an account's own), for what the web side reads itself (account names, published reels). */
  graphs: GraphHosts;
  /** The process's one Graph pacer (its state is in Redis): the hosts' clients and the Meta logins report to it. */
  pacer: GraphPacer;
  /** The tenants' connected publishing accounts, tokens sealed at rest. */
  accounts: ConnectedAccounts;
  /** The signed addresses under PUBLIC_URL Graph fetches uploads from (Instagram Login accounts), and whether it could. */
  uploadUrls: UploadUrls;
}

const holder = globalThis as unknown as { __dispatchServices?: Services };

export function getServices(): Services {
  holder.__dispatchServices ??= createServices(getConfig());
  return holder.__dispatchServices;
}

function createServices(config: Config): Services {
  const log = createLog("web");
  const kafka = createKafka(config.KAFKA_BROKERS, "dispatch-web");
  configureMetrics(config);
  const redis = observeRedis(createWebRedis(config.REDIS_URL), config);
  redis.on("error", () => {}); // reconnection is automatic; failures surface on the commands that need Redis
  let topicsChecked = false;
  let hub: StreamHub | undefined;
  const accountsKey = loadAccountsKey(config);
  const pacer = createGraphPacer(redis, { spacingMs: config.GRAPH_PACE_SPACING_MS });
  return {
    config,
    keys: new KeyRing(config.API_KEYS),
    sessions: new SessionStore(redis, loadSessionSecret(config)),
    throttle: redisAuthThrottle(redis),
    redis,
    kafka,
    log,
    streams: new OpenStreams(config.MAX_STREAMS_PER_TENANT),
    graphs: configuredGraphHosts(config, pacer, 10_000),
    pacer,
    accounts: new ConnectedAccounts(redis, accountsKey, config.REEL_ACCOUNTS),
    uploadUrls: createUploadUrls(config, accountsKey, redis),
    producer: connectedOnDemand(async (dropped) => {
      if (!topicsChecked) {
        topicsChecked = true;
        await ensureTopics(kafka, log);
      }
      const producer = createProducer(kafka);
      observeBroker(producer, "producer");
      await producer.connect();
      producer.on(producer.events.DISCONNECT, dropped);
      return producer;
    }),
    hub() {
      if (!hub) {
        const subscriber = createSubscriber(config.REDIS_URL);
        // ioredis reconnects by itself; the commands that need Redis fail and say so.
        subscriber.on("error", () => {});
        hub = new StreamHub(subscriber);
      }
      return hub;
    },
    admin: connectedOnDemand(async (dropped) => {
      const client = kafka.admin();
      observeBroker(client, "admin");
      await client.connect();
      client.on(client.events.DISCONNECT, dropped);
      return client;
    }),
  };
}

/** A client connected on first use, and again on the next use after it dropped (`dropped`) or failed to connect. */
function connectedOnDemand<T>(connect: (dropped: () => void) => Promise<T>): () => Promise<T> {
  let current: Promise<T> | undefined;
  const dropped = () => {
    current = undefined;
  };
  return () => {
    current ??= connect(dropped).catch((error: unknown) => {
      current = undefined;
      throw error;
    });
    return current;
  };
}
