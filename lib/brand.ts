/**
 * An Error base class whose `instanceof` checks a brand instead of one copy's prototype. The web
 * server bundles a lib module more than once (instrumentation and the routes each get a copy, and
 * the services on globalThis come from whichever ran first), so an error thrown by one copy fails
 * a bare `instanceof` against another copy's class. The brand is a Symbol.for key: every copy
 * registers the same one.
 */
export function brandedError(brand: string) {
  const key = Symbol.for(brand);
  return class BrandedError extends Error {
    constructor(message?: string, options?: ErrorOptions) {
      super(message, options);
      Object.defineProperty(this, key, { value: true });
    }

    static [Symbol.hasInstance](value: unknown): boolean {
      return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[key] === true;
    }
  };
}
