// Ceiling server for HTTP POST scenarios: bare uWebSockets.js that reads the whole body, parses
// it as JSON and answers it re-serialised — the least a JSON POST endpoint can do. Load-test
// tooling, so it imports uWS directly (see uws-hello.ts).

import uWS from 'uWebSockets.js';

const port = Number(process.env['PORT'] ?? '0');
const app = uWS.App();
app.post('/echo', (res) => {
  let aborted = false;
  const chunks: Buffer[] = [];
  res.onAborted(() => {
    aborted = true;
  });
  res.onData((chunk, isLast) => {
    // uWS reuses the chunk's memory after the callback: copy it.
    chunks.push(Buffer.from(chunk.slice(0)));
    if (!isLast || aborted) return;
    let answer: string;
    let status = '200 OK';
    try {
      answer = JSON.stringify(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    } catch {
      status = '400 Bad Request';
      answer = '{"error":"bad json"}';
    }
    res.cork(() => {
      res.writeStatus(status).writeHeader('content-type', 'application/json').end(answer);
    });
  });
});
app.any('/*', (res) => {
  res.writeStatus('404 Not Found').end();
});
app.listen('127.0.0.1', port, (token) => {
  if (!token) {
    process.stderr.write(`uws-echo: cannot listen on ${port}\n`);
    process.exit(1);
  }
  process.stdout.write(JSON.stringify({ port: uWS.us_socket_local_port(token) }) + '\n');
  process.once('SIGTERM', () => {
    uWS.us_listen_socket_close(token);
    process.exit(0);
  });
});
