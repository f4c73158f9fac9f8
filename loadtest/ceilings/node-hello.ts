// Ceiling server for HTTP GET scenarios served by the node:http transport: a bare node:http hello
// world, no router, no core (the node:http counterpart of uws-hello.ts).
// Prints {"port":N} on stdout once listening; exits on SIGTERM.

import { createServer } from 'node:http';

const port = Number(process.env['PORT'] ?? '0');
const server = createServer((req, res) => {
  if (req.url === '/hello') res.writeHead(200, ['content-length', '11']).end('hello world');
  else res.writeHead(404, ['content-length', '0']).end();
});
server.keepAliveTimeout = 10_000;
server.on('error', (error) => {
  process.stderr.write(`node-hello: cannot listen on ${port}: ${error.message}\n`);
  process.exit(1);
});
server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(
    JSON.stringify({ port: typeof address === 'object' && address ? address.port : port }) + '\n',
  );
  process.once('SIGTERM', () => {
    server.close();
    process.exit(0);
  });
});
