import type { Services } from "../../web/services";
import type { FacebookLoginDeps } from "./connect-with-facebook";
import type { InstagramLoginDeps } from "./connect-with-instagram";

type LoginServices = Pick<Services, "redis" | "accounts" | "config" | "log" | "pacer">;

/** What both of Meta's logins take from the web server's services, their endpoints aside. */
export function metaLoginClients(services: LoginServices): Omit<InstagramLoginDeps & FacebookLoginDeps, "login"> {
  return {
    redis: services.redis,
    accounts: services.accounts,
    stateTtlS: services.config.META_LOGIN_STATE_TTL_S,
    version: services.config.GRAPH_VERSION,
    fetch: (input, init) => fetch(input, init),
    // The web process's pacer, made once (lib/web/services.ts), not one per login request.
    pacer: services.pacer,
    log: services.log,
  };
}

export function facebookLoginDeps(services: LoginServices): FacebookLoginDeps {
  return { ...metaLoginClients(services), login: services.config.FACEBOOK_LOGIN };
}
