import http from 'node:http';
import { loadConfig } from '../config/env';

/**
 * Media service entry. It will carry telephony audio streams and browser calls (WebSocket)
 * and run conversation activities on the `media` task queue once calls exist; for now it
 * serves its health so the launcher and orchestrators can supervise it.
 */
function main(): void {
  const config = loadConfig();
  const startedAt = new Date().toISOString();
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/health') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ status: 'ok', service: 'media', started_at: startedAt }));
      return;
    }
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ detail: `no route for ${req.method} ${req.url}` }));
  });
  server.listen(config.mediaPort, config.host, () => {
    console.log(`media service listening on http://${config.host}:${config.mediaPort}`);
  });
  const stop = () => {
    server.close();
    server.closeAllConnections();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main();
