import type { Services } from "../../web/services";
import type { InstagramLoginDeps } from "./connect-with-instagram";

/** The login's clients from the web server's services. */
export function instagramLoginDeps(
  services: Pick<Services, "redis" | "accounts" | "config" | "log">,
): InstagramLoginDeps {
  return {
    redis: services.redis,
    accounts: services.accounts,
    login: services.config.INSTAGRAM_LOGIN,
    stateTtlS: services.config.META_LOGIN_STATE_TTL_S,
    version: services.config.GRAPH_VERSION,
    fetch: (input, init) => fetch(input, init),
    log: services.log,
  };
}
