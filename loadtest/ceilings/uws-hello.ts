// Ceiling server for HTTP GET scenarios: a bare uWebSockets.js hello world, no router, no core.
// It imports uWS directly on purpose — the point is to measure what the HTTP core and the service
// add on top of the library (this file is load-test tooling, not application code).
// Prints {"port":N} on stdout once listening; exits on SIGTERM after closing the listen socket.

import uWS from 'uWebSockets.js';

const port = Number(process.env['PORT'] ?? '0');
const app = uWS.App();
app.get('/hello', (res) => {
  res.end('hello world');
});
app.any('/*', (res) => {
  res.writeStatus('404 Not Found').end();
});
app.listen('127.0.0.1', port, (token) => {
  if (!token) {
    process.stderr.write(`uws-hello: cannot listen on ${port}\n`);
    process.exit(1);
  }
  process.stdout.write(JSON.stringify({ port: uWS.us_socket_local_port(token) }) + '\n');
  process.once('SIGTERM', () => {
    // uWS aborts the process on exit while a listen socket is open.
    uWS.us_listen_socket_close(token);
    process.exit(0);
  });
});
