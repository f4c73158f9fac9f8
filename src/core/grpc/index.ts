// The gRPC core: the only place that imports @grpc/grpc-js (see docs/architecture.md).
export {
  loadProto,
  lookupType,
  lookupService,
  protoDir,
  PROTO_FILES,
  type ProtoRoot,
  type ProtoType,
} from './proto.js';
export { codecFor, grpcFrame, DECODE_OPTIONS, type Codec } from './codec.js';
export { GrpcError, GrpcStatus, statusName, type GrpcStatusCode } from './errors.js';
export {
  serviceDefinition,
  type BidiHandler,
  type BidiStream,
  type CallContext,
  type ClientStreamHandler,
  type GrpcMethodDefinition,
  type GrpcServiceBinding,
  type GrpcServiceDefinition,
  type MethodHandler,
  type ServerStream,
  type ServerStreamHandler,
  type UnaryHandler,
} from './service.js';
export { startGrpcServer, type GrpcServerOptions, type RunningGrpcServer } from './server.js';
export { certificateHasDnsSan, type GrpcServerTlsOptions } from './tls.js';
export { healthService, type HealthService, type HealthServiceOptions, type ServingState } from './health.js';
export {
  createUnaryClient,
  openBidiStream,
  openClientStream,
  openServerStream,
  type BidiClientStream,
  type CallOptions,
  type GrpcClientOptions,
  type GrpcClientTlsOptions,
  type UnaryClient,
} from './client.js';
