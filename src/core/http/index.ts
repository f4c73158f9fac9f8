// The HTTP core: services import this module only; the transports (uws.ts, node.ts) stay inside.
export { Router, type Route, type Match, type WebSocketRoute } from './router.js';
export { startHttpServer, type HttpServerHandle, type HttpServerOptions } from './server.js';
export { endDrainsNow } from './dispatch.js';
export { bindUrl, describeTransport, resolveTransport, type TransportInfo } from './transport.js';
export { checkContentType, parseJsonBody } from './exchange.js';
export { NO_ROUTE, type RequestObserver, type RequestRecord } from './observer.js';
export { contentDisposition, sendBody, sendFile, sendStream, type SendFileOptions } from './download.js';
export * from './types.js';
