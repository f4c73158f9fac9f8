// gRPC server transport security for the rate limit service: the GRPC_SERVER_* / GRPC_CLIENT_*
// settings (read in observability.ts) as the gRPC core's TLS options.
//
// Hot reload: grpc-js supports it natively. Its certificate-provider credentials
// (experimental.FileWatcherCertificateProvider + createCertificateProviderServerCredentials,
// used by src/core/grpc/tls.ts) re-read the certificate, key and client CA every
// GRPC_SERVER_TLS_RELOAD_INTERVAL (default 10 s); each new TLS handshake uses the newest files,
// and connections already open keep the certificate they were set up with, so nothing is dropped
// and no listener restart is needed. Caveat (grpc-js behaviour): a refresh that cannot read a file
// drops the identity, and new handshakes fail until the file is readable again; so replace the
// files atomically (write beside, then rename), as Kubernetes secret volumes do.
// GRPC_SERVER_TLS_RELOAD_INTERVAL=0 reads the files once.

import type { GrpcServerTlsOptions } from '../../core/grpc/index.js';
import type { GrpcTlsSettings } from './observability.js';

export function toGrpcServerTls(settings: GrpcTlsSettings | undefined): GrpcServerTlsOptions | undefined {
  if (!settings) return undefined;
  const out: GrpcServerTlsOptions = {
    certFile: settings.certFile,
    keyFile: settings.keyFile,
    reloadIntervalMs: settings.reloadIntervalMs,
  };
  if (settings.clientCaFile !== undefined) out.clientCaFile = settings.clientCaFile;
  if (settings.clientSan !== undefined) out.clientSan = settings.clientSan;
  return out;
}
