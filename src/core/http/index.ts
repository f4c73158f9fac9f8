// The HTTP core: the only module that imports uWebSockets.js.
export { Router, type Route, type Match, type WebSocketRoute } from './router.js';
export { startHttpServer, type HttpServerHandle, type HttpServerOptions } from './server.js';
export { checkContentType } from './exchange.js';
export { contentDisposition, sendBody, sendFile, sendStream, type SendFileOptions } from './download.js';
export * from './types.js';
