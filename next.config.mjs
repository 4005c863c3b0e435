const dev = process.env.NODE_ENV === "development";

// Next's app router writes inline <script>s (the RSC payload) into every page. A nonce would need
// every page rendered per request (no static pages), so script-src allows 'unsafe-inline' (and
// 'unsafe-eval' only under `next dev`, for its refresh runtime); everything else is locked down,
// and frame-ancestors 'none' keeps the dashboard out of other sites' frames.
const contentSecurityPolicy = [
  "default-src 'self'",
  `script-src 'self' 'unsafe-inline'${dev ? " 'unsafe-eval'" : ""}`,
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "media-src 'self' http: https: blob:",
  "font-src 'self'",
  `connect-src 'self'${dev ? " ws: wss:" : ""}`,
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** @type {import('next').NextConfig} */
const nextConfig = {
  // The container image (Dockerfile) builds with NEXT_OUTPUT=standalone and runs .next/standalone/server.js.
  // `next start` (npm start, the e2e tests, the bench) serves the regular build: on a standalone
  // build it warns that it "does not work" with it, so the regular build stays the default.
  output: process.env.NEXT_OUTPUT === "standalone" ? "standalone" : undefined,
  reactStrictMode: true,
  poweredByHeader: false,
  // ioredis and kafkajs are Node libraries with optional native peers; keep them out of the bundle.
  serverExternalPackages: ["ioredis", "kafkajs", "mp4box", "gpt-tokenizer"],
  async headers() {
    return [
      {
        source: "/:path*",
        headers: [
          { key: "Content-Security-Policy", value: contentSecurityPolicy },
          { key: "X-Content-Type-Options", value: "nosniff" },
          { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
          { key: "X-Frame-Options", value: "DENY" },
        ],
      },
    ];
  },
};

export default nextConfig;
