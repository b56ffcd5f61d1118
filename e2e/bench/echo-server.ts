/**
 * The baseline of `pnpm bench e2e`: a bare fastify app whose one route answers a JSON POST with
 * its body. Started as a process of its own (as the webhook's server is), it prints
 * `LISTENING <port>` once it listens on 127.0.0.1, and closes on SIGTERM.
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.post('/echo', async (request) => request.body);
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
process.once('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
