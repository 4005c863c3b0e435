import type { Services } from "../../web/services";
import type { InstagramLoginDeps } from "./connect-with-instagram";
import { metaLoginClients } from "./meta-login-deps";

/** The login's clients from the web server's services. */
export function instagramLoginDeps(
  services: Pick<Services, "redis" | "accounts" | "config" | "log" | "pacer">,
): InstagramLoginDeps {
  return { ...metaLoginClients(services), login: services.config.INSTAGRAM_LOGIN };
}
