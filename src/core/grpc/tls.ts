// Server transport security: TLS from certificate files, mutual TLS when a client CA is given,
// an optional check of the client certificate's SAN, and hot reload of the files through
// grpc-js's certificate-provider credentials fed by FileCertificateProvider (re-read on an
// interval; new connections get the new certificate, open connections keep theirs).

import { readFileSync } from 'node:fs';
import type { PeerCertificate } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { FileCertificateProvider } from './cert-provider.js';
import { GrpcStatus } from './errors.js';

export interface GrpcServerTlsOptions {
  certFile: string;
  keyFile: string;
  /** CA that client certificates must chain to; turns on mutual TLS (clients without a cert are refused). */
  clientCaFile?: string;
  /** DNS name the client certificate must carry in its subjectAltName (mutual TLS only). */
  clientSan?: string;
  /** How often the files are re-read for hot reload; 0 loads them once. Default 10 s. */
  reloadIntervalMs?: number;
}

export interface ServerSecurity {
  credentials: grpc.ServerCredentials;
  interceptors: grpc.ServerInterceptor[];
  /** Stops certificate reloading (after close or a failed start). */
  dispose(): void;
}

function readOrThrow(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new Error(`cannot read gRPC TLS ${what} ${path}: ${(err as Error).message}`);
  }
}

/** True when the certificate lists `san` as a DNS name (exact match, case-insensitive). */
export function certificateHasDnsSan(cert: PeerCertificate | undefined, san: string): boolean {
  const list = cert?.subjectaltname;
  if (!list) return false;
  const wanted = san.toLowerCase();
  return list.split(',').some((entry) => {
    const item = entry.trim();
    return item.toLowerCase().startsWith('dns:') && item.slice(4).toLowerCase() === wanted;
  });
}

function sanInterceptor(san: string): grpc.ServerInterceptor {
  return (_method, call) =>
    new grpc.ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata, forward) {
            if (certificateHasDnsSan(call.getAuthContext().sslPeerCertificate, san)) forward(metadata);
            else
              call.sendStatus({
                code: GrpcStatus.UNAUTHENTICATED,
                details: `client certificate does not name ${san}`,
              });
          },
        });
      },
    });
}

export function serverSecurity(
  tls: GrpcServerTlsOptions | undefined,
  onReloadError: (err: Error) => void,
): ServerSecurity {
  if (!tls) {
    return {
      credentials: grpc.ServerCredentials.createInsecure(),
      interceptors: [],
      dispose: () => undefined,
    };
  }
  if (tls.clientSan && !tls.clientCaFile)
    throw new Error('gRPC TLS: a client SAN needs a client CA (mutual TLS)');
  // Read once up front so a wrong path stops the start with a message naming the file, instead
  // of a server that silently drops every connection.
  const cert = readOrThrow(tls.certFile, 'certificate');
  const key = readOrThrow(tls.keyFile, 'key');
  const ca = tls.clientCaFile ? readOrThrow(tls.clientCaFile, 'client CA') : null;
  const interceptors = tls.clientSan ? [sanInterceptor(tls.clientSan)] : [];
  const interval = tls.reloadIntervalMs ?? 10_000;
  if (interval <= 0) {
    return {
      credentials: grpc.ServerCredentials.createSsl(
        ca,
        [{ cert_chain: cert, private_key: key }],
        ca !== null,
      ),
      interceptors,
      dispose: () => undefined,
    };
  }
  const provider = new FileCertificateProvider(
    { certFile: tls.certFile, keyFile: tls.keyFile, caFile: tls.clientCaFile },
    interval,
    onReloadError,
  );
  const credentials = grpc.experimental.createCertificateProviderServerCredentials(
    provider,
    ca ? provider : null,
    ca !== null,
  );
  return { credentials, interceptors, dispose: () => provider.dispose() };
}
