// Ceiling server for HTTP POST scenarios served by the node:http transport: bare node:http that
// reads the whole body, parses it as JSON and answers it re-serialised — what uws-echo.ts does,
// on the library the fallback transport uses, so a node-transport figure has its own ceiling.
// Prints {"port":N} on stdout once listening; exits on SIGTERM.

import { createServer } from 'node:http';

const port = Number(process.env['PORT'] ?? '0');
const server = createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/echo') {
    res.writeHead(404, ['content-length', '0']).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let answer: string;
    let status = 200;
    try {
      answer = JSON.stringify(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    } catch {
      status = 400;
      answer = '{"error":"bad json"}';
    }
    res.writeHead(status, [
      'content-type',
      'application/json',
      'content-length',
      String(Buffer.byteLength(answer)),
    ]);
    res.end(answer);
  });
});
// The same keep-alive rest as the node:http transport.
server.keepAliveTimeout = 10_000;
server.on('error', (error) => {
  process.stderr.write(`node-echo: cannot listen on ${port}: ${error.message}\n`);
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
