/**
 * Where the dashboard is signed in to, as the first start prints it: PUBLIC_BASE_URL when set,
 * else this machine's address and port (an "any interface" host is reachable as localhost).
 */
export function signInUrl(config: { HOST: string; PORT: number; PUBLIC_BASE_URL?: string }): string {
  if (config.PUBLIC_BASE_URL) return new URL('/', config.PUBLIC_BASE_URL).href;
  const anyInterface = ['', '0.0.0.0', '::', '[::]'].includes(config.HOST);
  const host = anyInterface ? 'localhost' : config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  return `http://${host}:${config.PORT}/`;
}
