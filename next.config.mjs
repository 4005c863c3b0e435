/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // ioredis and kafkajs are Node libraries with optional native peers; keep them out of the bundle.
  serverExternalPackages: ["ioredis", "kafkajs", "mp4box", "gpt-tokenizer"],
};

export default nextConfig;
